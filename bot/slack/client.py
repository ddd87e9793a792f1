"""The Web API client every Slack call goes through, with Slack's retry etiquette."""

from __future__ import annotations

from typing import Any

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.store.metrics import count_retry


class _RateLimited(AsyncRateLimitErrorRetryHandler):
    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        count_retry("ratelimited")
        await super().prepare_for_next_attempt_async(**kwargs)


class _ServerError(AsyncServerErrorRetryHandler):
    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        count_retry("server_error")
        await super().prepare_for_next_attempt_async(**kwargs)


class _Connection(AsyncConnectionErrorRetryHandler):
    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        count_retry("connection")
        await super().prepare_for_next_attempt_async(**kwargs)


def retry_handlers() -> list[AsyncRetryHandler]:
    # slack_sdk retries only connection errors by default; Slack asks clients to
    # honour Retry-After on 429 and to back off on 5xx. Past these retries the
    # notifier's outbox keeps trying, so a message is never dropped.
    return [
        _Connection(max_retry_count=2),
        _RateLimited(max_retry_count=3),
        _ServerError(max_retry_count=2),
    ]


def web_client(settings: Settings, *, timeout_s: int = 10) -> AsyncWebClient:
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    return AsyncWebClient(
        token=token,
        base_url=settings.slack_api_url,
        retry_handlers=retry_handlers(),
        timeout=timeout_s,
    )
