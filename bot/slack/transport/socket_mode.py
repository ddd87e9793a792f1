"""Socket Mode: Slack's events arrive over a WebSocket the bot opens, held by one supervised task.

Why our own small client rather than slack_sdk's: its `connect()` retries a refused app
token inside the call for ever, so `serve` could neither stop on SIGTERM nor say what was
wrong. Here one task owns the whole life of the link:

    apps.connections.open (app token) -> wss URL -> "hello" -> envelopes, each acked
    -> "disconnect" (refresh_requested, warning, ...) or a dropped socket -> open again

A failure to connect waits with capped, jittered exponential backoff before the next try;
a `disconnect` that Slack asked for reconnects at once. `status` says at every moment
whether the link is up and, when it is not, why (e.g. `invalid_auth`); `/healthz` reports
it. Cancelling or setting `stop` ends the task at whatever step it is in.

Envelopes are dispatched to Bolt exactly as its own Socket Mode adapter does (mode
"socket_mode", the payload as body, retries as `x-slack-retry-*` headers), and the ack
carries Bolt's response body as its payload, which Slack treats like an HTTP response.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.args.plainjson import text_too_deep
from bot.health import Down
from bot.slack.transport import inbound
from bot.slack.transport import messages as tmsg
from bot.supervise import Backoff

log = logging.getLogger(__name__)

ENVELOPE_TYPES = frozenset({"events_api", "interactive", "slash_commands"})
# The reasons /healthz may repeat: ours ("socket closed"), Slack's error codes
# ("invalid_auth") and disconnect reasons ("reconnecting (refresh_requested)").
_SHOWN = re.compile(r"^[a-z][a-z_ ]{0,40}( \([a-z_]{1,40}\))?$")


@dataclass
class LinkStatus:
    connected: bool = False
    reason: str = "connecting"  # why it is not connected; meaningless while connected
    connections: int = 0  # sessions that reached "hello"
    failures: int = 0  # failed connects since the last good one

    def problem(self) -> Down | None:
        """None when connected; else what /healthz says: the reason only when it is a
        word of ours or an error code of Slack's, never an exception's text."""
        if self.connected:
            return None
        reason = self.reason if _SHOWN.match(self.reason) else "connection failed; see the log"
        return Down("slack_socket_mode", tmsg.SOCKET_MODE_DOWN.format(reason=reason))


class SocketModeLink:
    def __init__(
        self,
        bolt: AsyncApp,
        app_token: str,
        api_url: str,
        *,
        backoff: Backoff | None = None,
        heartbeat_s: float = 30.0,
        connect_timeout_s: float = 10.0,
    ) -> None:
        self.bolt = bolt
        self.app_token = app_token
        self.api = AsyncWebClient(base_url=api_url, timeout=int(connect_timeout_s))
        self.backoff = backoff or Backoff()
        self.heartbeat_s = heartbeat_s
        self.connect_timeout_s = connect_timeout_s
        self.status = LinkStatus()
        self._inflight: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        """Keep a connection open until `stop` is set (or the task is cancelled).

        Every step (the HTTP call, the WebSocket handshake, a backoff wait) is cut
        short by `stop`: a Slack that never answers cannot hold up a shutdown."""
        linking = asyncio.create_task(self._keep_connected())
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({linking, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (linking, stopping):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await linking
            self.status.connected = False
            self.status.reason = "stopped"
            await self._drain()

    async def _keep_connected(self) -> None:
        async with aiohttp.ClientSession() as http:
            while True:
                try:
                    url = await self._open_url()
                    if await self._session(http, url):
                        continue  # Slack asked us to reconnect: at once, no backoff
                    self._failed("socket closed")
                except SlackApiError as exc:
                    self._failed(str(exc.response.get("error") or "slack_api_error"))
                except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
                    self._failed(f"{type(exc).__name__}: {exc}".rstrip(": "))
                except Exception as exc:  # a bug must not end the link for good: retry it
                    log.exception("socket mode link error")
                    self._failed(f"{type(exc).__name__}: {exc}".rstrip(": "))
                await asyncio.sleep(self.backoff.delay(self.status.failures))

    def _failed(self, reason: str) -> None:
        self.status.connected = False
        self.status.reason = reason
        self.status.failures += 1
        log.warning(
            "socket mode connection failed",
            extra={"reason": reason, "failures": self.status.failures},
        )

    async def _open_url(self) -> str:
        response = await self.api.apps_connections_open(app_token=self.app_token)
        url = response.get("url")
        if not isinstance(url, str) or not url:
            raise ValueError("apps.connections.open returned no url")
        return url

    async def _session(self, http: aiohttp.ClientSession, url: str) -> bool:
        """One connection, until it closes; True when Slack asked us to reconnect."""
        async with asyncio.timeout(self.connect_timeout_s):
            ws = await http.ws_connect(url, heartbeat=self.heartbeat_s)
        try:
            while True:
                message = await ws.receive()
                if message.type != aiohttp.WSMsgType.TEXT:
                    return False  # closed, closing or an error: the caller reconnects
                if self._on_text(ws, message.data):
                    return True
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1):
                    await ws.close()

    def _on_text(self, ws: aiohttp.ClientWebSocketResponse, text: str) -> bool:
        """Handle one frame; True when it is Slack's request to reconnect."""
        try:
            if text_too_deep(text, inbound.MAX_DEPTH):  # json.loads would raise RecursionError
                raise ValueError("nested too deep")
            frame = json.loads(text)
        except ValueError:
            log.warning("socket mode frame is not JSON", extra={"size": len(text)})
            return False
        if not isinstance(frame, dict):
            return False
        kind = frame.get("type")
        if kind == "hello":
            self.status.connected = True
            self.status.failures = 0
            self.status.connections += 1
            log.info("socket mode connected", extra={"connections": self.status.connections})
        elif kind == "disconnect":
            self.status.connected = False
            self.status.reason = f"reconnecting ({frame.get('reason', 'disconnect')})"
            log.info("socket mode disconnect asked", extra={"reason": frame.get("reason")})
            return True
        elif kind in ENVELOPE_TYPES and frame.get("envelope_id"):
            task = asyncio.create_task(self._dispatch(ws, frame))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)
        return False

    async def _dispatch(self, ws: aiohttp.ClientWebSocketResponse, frame: dict[str, Any]) -> None:
        try:
            payload = inbound.check(frame.get("payload"))
        except inbound.Malformed as exc:
            # Acked with no answer: Slack would only send the same bad envelope again.
            log.info("socket mode envelope refused", extra={"reason": str(exc)})
            await self._ack(ws, {"envelope_id": frame["envelope_id"]})
            return
        headers: dict[str, str | Sequence[str]] = {}
        if frame.get("retry_attempt"):
            headers["x-slack-retry-num"] = str(frame["retry_attempt"])
            headers["x-slack-retry-reason"] = str(frame.get("retry_reason") or "")
        request = AsyncBoltRequest(body=payload, mode="socket_mode", headers=headers)
        response = await self.bolt.async_dispatch(request)
        if response.status != 200:
            log.info("socket mode envelope not acked", extra={"status": response.status})
            return
        ack: dict[str, Any] = {"envelope_id": frame["envelope_id"]}
        if response.body:
            content_type = (response.headers.get("content-type") or [""])[0]
            if content_type.startswith("application/json"):
                ack["payload"] = json.loads(response.body)
            else:
                ack["payload"] = {"text": response.body}
        await self._ack(ws, ack)

    @staticmethod
    async def _ack(ws: aiohttp.ClientWebSocketResponse, ack: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await ws.send_str(json.dumps(ack))

    async def _drain(self) -> None:
        """Let envelopes already handed to Bolt finish (their acks may not get out)."""
        if self._inflight:
            await asyncio.wait(set(self._inflight), timeout=2)
