"""Slack's side of Socket Mode: the app opens a WebSocket and Slack pushes envelopes down it.

    POST /api/apps.connections.open   (app-level token, xapp-...) -> {"ok": true, "url": "ws://..."}
    WS   /_emu/socket/{ticket}        each URL works once, as Slack's do

On connect the emulator sends `{"type": "hello", ...}`. Every delivery is an envelope
`{"envelope_id", "type": "events_api" | "interactive" | "slash_commands", "payload",
"accepts_response_payload", "retry_attempt", "retry_reason"}`; the app acks it by sending
`{"envelope_id": ..., "payload"?: {...}}`, and the payload plays the part of an HTTP
response body. No ack within the ack timeout counts as a timeout (events are retried,
as over HTTP). `disconnect(reason)` sends `{"type": "disconnect", "reason": ...}` and
closes the socket, as Slack does before it rotates a connection; `drop()` closes without
a word, as a network fault would.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from bot.sandbox.slack.errors import WebApiError

SOCKET_PATH = "/_emu/socket/{ticket}"


@dataclass
class Acked:
    """What the app sent back for one envelope."""

    payload: dict[str, Any] | None


@dataclass
class _Connection:
    socket: WebSocket
    number: int
    pending: dict[str, asyncio.Future[Acked]] = field(default_factory=dict)


class NoConnection(Exception):
    """No app has a Socket Mode connection open."""


class SocketHub:
    def __init__(self, app_token: str | None, base_url: Callable[[], str]) -> None:
        self.app_token = app_token
        self.base_url = base_url
        self._tickets: set[str] = set()
        self._connections: list[_Connection] = []
        self._numbers = itertools.count(1)
        self._turn = itertools.count()
        self.opened = 0  # connections ever accepted: lets tests see a reconnect
        self._changed = asyncio.Event()

    @property
    def enabled(self) -> bool:
        return self.app_token is not None

    @property
    def connected(self) -> int:
        return len(self._connections)

    # --- apps.connections.open ------------------------------------------------------------

    def open_url(self, token: str | None) -> dict[str, Any]:
        if token is None:
            raise WebApiError("not_authed")
        if not self.enabled:
            raise WebApiError("not_allowed_token_type")
        if token != self.app_token:
            raise WebApiError("invalid_auth")
        ticket = secrets.token_urlsafe(12)
        self._tickets.add(ticket)
        ws_base = self.base_url().replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        return {"ok": True, "url": f"{ws_base}/_emu/socket/{ticket}"}

    # --- the socket -----------------------------------------------------------------------

    def routes(self) -> list[WebSocketRoute]:
        return [WebSocketRoute(SOCKET_PATH, self._serve)]

    async def _serve(self, websocket: WebSocket) -> None:
        ticket = websocket.path_params["ticket"]
        if ticket not in self._tickets:
            await websocket.close(code=4001, reason="invalid_ticket")
            return
        self._tickets.discard(ticket)
        await websocket.accept()
        conn = _Connection(websocket, next(self._numbers))
        hello = {
            "type": "hello",
            "num_connections": len(self._connections) + 1,
            "connection_info": {"app_id": "AEMULATOR"},
            "debug_info": {"host": "emulator", "approximate_connection_time": 3600},
        }
        await websocket.send_text(json.dumps(hello))
        self._connections.append(conn)
        self.opened += 1
        self._notify()
        try:
            while True:
                self._ack(conn, await websocket.receive_text())
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            self._forget(conn)

    def _ack(self, conn: _Connection, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            return  # Slack ignores what it cannot read; the envelope then times out
        if not isinstance(message, dict):
            return
        future = conn.pending.pop(str(message.get("envelope_id")), None)
        if future is not None and not future.done():
            payload = message.get("payload")
            future.set_result(Acked(payload if isinstance(payload, dict) else None))

    def _forget(self, conn: _Connection) -> None:
        if conn in self._connections:
            self._connections.remove(conn)
        for future in conn.pending.values():
            if not future.done():
                future.set_exception(ConnectionResetError("socket closed before the ack"))
        conn.pending.clear()
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_connected(self, count: int = 1, timeout: float = 10.0) -> None:
        """Wait until at least `count` connections are open."""
        async with asyncio.timeout(timeout):
            while self.connected < count:
                await self._changed.wait()

    async def send(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        timeout: float,
        retry_attempt: int = 0,
        retry_reason: str = "",
    ) -> Acked:
        """Push one envelope to one open connection (in turn) and wait for its ack.

        Raises NoConnection, TimeoutError, or ConnectionResetError if the socket closes first.
        """
        if not self._connections:
            raise NoConnection
        conn = self._connections[next(self._turn) % len(self._connections)]
        envelope_id = secrets.token_hex(16)
        future: asyncio.Future[Acked] = asyncio.get_running_loop().create_future()
        conn.pending[envelope_id] = future
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": retry_reason,
        }
        try:
            await conn.socket.send_text(json.dumps(envelope))
            async with asyncio.timeout(timeout):
                return await future
        finally:
            conn.pending.pop(envelope_id, None)

    async def disconnect(self, reason: str = "refresh_requested") -> int:
        """Ask every open connection to go away, as Slack does; returns how many."""
        closing = list(self._connections)
        for conn in closing:
            message = {"type": "disconnect", "reason": reason, "debug_info": {"host": "emulator"}}
            with contextlib.suppress(RuntimeError):
                await conn.socket.send_text(json.dumps(message))
                await conn.socket.close()
            self._forget(conn)
        return len(closing)

    async def drop(self) -> int:
        """Close every connection without a word; returns how many."""
        closing = list(self._connections)
        for conn in closing:
            with contextlib.suppress(RuntimeError):
                await conn.socket.close(code=1011)
            self._forget(conn)
        return len(closing)
