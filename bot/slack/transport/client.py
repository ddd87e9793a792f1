"""The Web API client every Slack call goes through, with Slack's retry etiquette."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from aiohttp import FormData
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.config import Settings
from bot.slack.transport.ratelimit import Limits, RateGate, limits_for, retry_after_s
from bot.store.figures.metrics import count_retry


class _RateLimited(AsyncRateLimitErrorRetryHandler):
    """Each call waits its own Retry-After: the way before the shared gate, kept only
    for a client made with `gate=False` (the bench's comparison)."""

    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        count_retry("ratelimited")
        state: RetryState = kwargs["state"]
        response = kwargs.get("response")
        if response is None:
            await super().prepare_for_next_attempt_async(**kwargs)
            return
        state.next_attempt_requested = True
        await asyncio.sleep(retry_after_s(response.headers) + random.random())
        state.increment_current_attempt()


class LimitedWebClient(AsyncWebClient):
    """An AsyncWebClient whose every call passes one `RateGate` first, and whose 429s
    close the gate for the whole method (bot/slack/transport/ratelimit.py)."""

    gate: RateGate

    async def api_call(
        self,
        api_method: str,
        *,
        http_verb: str = "POST",
        files: dict[str, Any] | None = None,
        data: dict[str, Any] | FormData | None = None,
        params: dict[str, Any] | None = None,
        json: dict[str, Any] | None = None,
        headers: dict[str, Any] | None = None,
        auth: dict[str, Any] | None = None,
    ) -> AsyncSlackResponse:
        channel = _channel_of(data, params, json)
        attempt = 0
        while True:
            async with self.gate.turn(api_method, channel):
                await self.gate.enter(api_method, channel)
                try:
                    resp = await super().api_call(
                        api_method,
                        http_verb=http_verb,
                        files=files,
                        data=data,
                        params=params,
                        json=json,
                        headers=headers,
                        auth=auth,
                    )
                except SlackApiError as exc:
                    if exc.response.status_code != 429:
                        raise
                    # Closed before the next post in this channel takes its turn.
                    self.gate.close(api_method, retry_after_s(exc.response.headers))
                    count_retry("ratelimited")
                    attempt += 1
                    if attempt > self.gate.limits.retries:
                        raise  # the notifier's outbox tries again later; nothing is dropped
                    continue
                if channel:
                    self.gate.learn(channel, resp.get("channel"))
                return resp


def _channel_of(*parts: object) -> str | None:
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("channel"), str):
            return str(part["channel"])
    return None


class _ServerError(AsyncServerErrorRetryHandler):
    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        count_retry("server_error")
        await super().prepare_for_next_attempt_async(**kwargs)


class _Connection(AsyncConnectionErrorRetryHandler):
    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        count_retry("connection")
        await super().prepare_for_next_attempt_async(**kwargs)


def retry_handlers(*, per_call_429: bool = False) -> list[AsyncRetryHandler]:
    # slack_sdk retries only connection errors by default; Slack asks clients to
    # back off on 5xx. A 429 is the gate's (LimitedWebClient): it waits out Retry-After
    # for every call of the method, not only the one Slack answered. Past these retries
    # the notifier's outbox keeps trying, so a message is never dropped.
    handlers: list[AsyncRetryHandler] = [
        _Connection(max_retry_count=2),
        _ServerError(max_retry_count=2),
    ]
    if per_call_429:
        handlers.append(_RateLimited(max_retry_count=3))
    return handlers


def web_client(
    settings: Settings, *, timeout_s: int = 10, limits: Limits | None = None, gate: bool = True
) -> AsyncWebClient:
    """The process's client, its calls paced to `limits` (None: Slack's own for Slack's
    Web API, only its 429s for another, bot/slack/transport/ratelimit.py). `gate=False`: no shared
    gate, each call waits out its own 429 (slack_sdk's way, which Slack throttles harder;
    kept for the bench's comparison)."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    if not gate:
        return AsyncWebClient(
            token=token,
            base_url=settings.slack_api_url,
            retry_handlers=retry_handlers(per_call_429=True),
            timeout=timeout_s,
        )
    client = LimitedWebClient(
        token=token,
        base_url=settings.slack_api_url,
        retry_handlers=retry_handlers(),
        timeout=timeout_s,
    )
    client.gate = RateGate(limits or limits_for(settings.slack_api_url))
    return client
