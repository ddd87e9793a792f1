"""The Web API client every Slack call goes through, with Slack's retry etiquette."""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings


def retry_handlers() -> list[AsyncRetryHandler]:
    # slack_sdk retries only connection errors by default; Slack asks clients to
    # honour Retry-After on 429 and to back off on 5xx. Past these retries the
    # notifier's outbox keeps trying, so a message is never dropped.
    return [
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
        AsyncRateLimitErrorRetryHandler(max_retry_count=3),
        AsyncServerErrorRetryHandler(max_retry_count=2),
    ]


def web_client(settings: Settings) -> AsyncWebClient:
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    return AsyncWebClient(
        token=token, base_url=settings.slack_api_url, retry_handlers=retry_handlers(), timeout=10
    )
