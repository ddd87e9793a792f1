"""Sending requests to the bot the way Slack does: signed, timed out at 3 s, events retried.

Signature: `X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:{timestamp}:{raw body}")>`
with `X-Slack-Request-Timestamp`. Events (JSON `event_callback` envelopes) that get no 2xx
within the ack timeout, or an error status, are retried up to 3 times with the same body
and `X-Slack-Retry-Num` / `X-Slack-Retry-Reason`; a response header `X-Slack-No-Retry: 1`
stops the retries. Interactivity and slash commands (form bodies) are sent once.
Every attempt is recorded.

With Socket Mode on (the emulator was given an app-level token), the same deliveries go down
the app's WebSocket as envelopes instead (see socket_mode.py); the ack's payload stands in
for the HTTP body, and the retries, timeouts and records are the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.sandbox.slack.ids import Clock
from bot.sandbox.slack.to_app.socket_mode import NoConnection, SocketHub

ACK_TIMEOUT_SECONDS = 3.0
# Slack retries nearly at once, then after 1 and 5 minutes; the emulator keeps the shape
# but not the wait.
RETRY_DELAYS_SECONDS = (0.0, 0.5, 1.0)
USER_AGENT = "Slackbot 1.0 (hitl-bot emulator)"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class Delivery:
    """One HTTP attempt to reach the bot."""

    url: str | None
    kind: str  # "event", "block_actions", "view_submission", "view_closed", "command"
    status: int | None  # None: no answer (timeout, refused, no URL)
    latency_ms: float
    retry_num: int = 0
    retry_reason: str | None = None
    error: str | None = None  # "http_timeout", "connection_failed", "no_events_url", ...
    event_id: str | None = None
    event_type: str | None = None
    at: float = 0.0
    response_body: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


@dataclass
class Answer:
    """The bot's answer to the last attempt of a delivery."""

    status: int | None
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    attempts: list[Delivery] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json_body(self) -> Any:
        """The body parsed as JSON; the raw text when it is not JSON; None when empty."""
        text = self.body.decode("utf-8", "replace")
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text


class Deliverer:
    def __init__(
        self,
        signing_secret: str,
        events_url: str | None,
        *,
        clock: Clock = time.time,
        ack_timeout: float = ACK_TIMEOUT_SECONDS,
        retry_delays: tuple[float, ...] = RETRY_DELAYS_SECONDS,
        socket: SocketHub | None = None,
    ) -> None:
        self.signing_secret = signing_secret
        self.socket = socket
        self.events_url = events_url
        self.clock = clock
        self.ack_timeout = ack_timeout
        self.retry_delays = retry_delays
        self.records: list[Delivery] = []
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[Answer]] = set()

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=None, follow_redirects=False)
        return self._client

    async def cancel_pending(self) -> None:
        """Abandon background deliveries still running (and their retries)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def aclose(self) -> None:
        await self.cancel_pending()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait until every background delivery (with its retries) is over."""
        async with asyncio.timeout(timeout):
            while pending := [t for t in self._tasks if not t.done()]:
                await asyncio.gather(*pending, return_exceptions=True)

    def _headers(self, body: bytes, content_type: str) -> dict[str, str]:
        timestamp = str(int(self.clock()))
        return {
            "Content-Type": content_type,
            "User-Agent": USER_AGENT,
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": signature(self.signing_secret, timestamp, body),
        }

    async def _attempt(
        self,
        body: bytes,
        content_type: str,
        extra: dict[str, str],
        record: Delivery,
        envelope: tuple[str, dict[str, Any]],
    ) -> Answer:
        record.at = self.clock()
        started = time.monotonic()
        if self.socket is not None and self.socket.enabled:
            record.url = "socket_mode"
            answer = await self._over_socket(envelope, record)
        else:
            record.url = self.events_url
            answer = await self._over_http(body, content_type, extra)
        record.status, record.error = answer.status, answer.error
        record.latency_ms = round((time.monotonic() - started) * 1000, 1)
        record.response_body = answer.body.decode("utf-8", "replace")[:2000]
        self.records.append(record)
        answer.attempts.append(record)
        return answer

    async def _over_http(self, body: bytes, content_type: str, extra: dict[str, str]) -> Answer:
        url = self.events_url
        if url is None:
            return Answer(status=None, error="no_events_url")
        headers = {**self._headers(body, content_type), **extra}
        try:
            async with asyncio.timeout(self.ack_timeout):
                response = await self._http().post(url, content=body, headers=headers)
        except TimeoutError:
            return Answer(status=None, error="http_timeout")
        except httpx.ConnectError:
            return Answer(status=None, error="connection_failed")
        except httpx.HTTPError:
            return Answer(status=None, error="unknown_error")
        answer = Answer(response.status_code, response.content, dict(response.headers))
        if not answer.ok:
            answer.error = "http_error"
        return answer

    async def _over_socket(self, envelope: tuple[str, dict[str, Any]], record: Delivery) -> Answer:
        assert self.socket is not None
        kind, payload = envelope
        try:
            acked = await self.socket.send(
                kind,
                payload,
                timeout=self.ack_timeout,
                retry_attempt=record.retry_num,
                retry_reason=record.retry_reason or "",
            )
        except NoConnection:
            return Answer(status=None, error="no_socket_connection")
        except TimeoutError:
            return Answer(status=None, error="http_timeout")
        except (ConnectionError, RuntimeError):
            return Answer(status=None, error="connection_failed")
        body = json.dumps(acked.payload).encode() if acked.payload is not None else b""
        return Answer(200, body, {"content-type": "application/json"})

    async def send_form(self, kind: str, fields: dict[str, str]) -> Answer:
        """An interaction or slash command: form-encoded, sent once."""
        body = urlencode(fields).encode()
        record = Delivery(None, kind, None, 0.0)
        if "payload" in fields:
            envelope: tuple[str, dict[str, Any]] = ("interactive", json.loads(fields["payload"]))
        else:
            envelope = ("slash_commands", dict(fields))
        content_type = "application/x-www-form-urlencoded"
        return await self._attempt(body, content_type, {}, record, envelope)

    async def send_interaction(self, payload: dict[str, Any]) -> Answer:
        return await self.send_form(str(payload.get("type")), {"payload": json.dumps(payload)})

    async def send_event(self, envelope: dict[str, Any]) -> Answer:
        """An Events API envelope, retried like Slack retries it."""
        body = json.dumps(envelope).encode()
        event_id = str(envelope.get("event_id"))
        event_type = str((envelope.get("event") or {}).get("type"))
        attempts: list[Delivery] = []
        extra: dict[str, str] = {}
        answer = Answer(status=None)
        for retry_num in range(len(self.retry_delays) + 1):
            if retry_num:
                await asyncio.sleep(self.retry_delays[retry_num - 1])
                extra = {
                    "X-Slack-Retry-Num": str(retry_num),
                    "X-Slack-Retry-Reason": answer.error or "unknown_error",
                }
            record = Delivery(
                None,
                "event",
                None,
                0.0,
                retry_num,
                extra.get("X-Slack-Retry-Reason"),
                event_id=event_id,
                event_type=event_type,
            )
            answer = await self._attempt(
                body, "application/json", extra, record, ("events_api", envelope)
            )
            attempts += answer.attempts
            no_retry = answer.headers.get("x-slack-no-retry") == "1"
            if answer.ok or no_retry or answer.error == "no_events_url":
                break
        answer.attempts = attempts
        return answer

    def send_event_later(self, envelope: dict[str, Any]) -> asyncio.Task[Answer]:
        """Deliver in the background (as Slack does); `settle()` waits for all of them."""
        task = asyncio.create_task(self.send_event(envelope))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
