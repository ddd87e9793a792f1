"""Serving an MCP server on stdio or on streamable HTTP, until stopped.

Both the high-level `MCPServer` (`serve`) and the low-level `Server` (`proxy`) offer
`streamable_http_app()` and its `session_manager`; only stdio differs, so the
caller passes how to run that.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.asgi import serve_asgi
from bot.errors import ConfigError
from bot.mcp import messages as msg

MCP_PATH = "/mcp"
TOKEN_ENV = "HITL_MCP_TOKEN"
UNAUTHORIZED = b'{"error": "unauthorized", "detail": "send Authorization: Bearer $HITL_MCP_TOKEN"}'


class HttpServable(Protocol):
    def streamable_http_app(self, *, streamable_http_path: str = ..., host: str = ...) -> Any: ...

    @property
    def session_manager(self) -> StreamableHTTPSessionManager: ...


async def run_stdio(server: Server[Any]) -> None:
    """A low-level server on this process's stdin/stdout, until stdin closes."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def until_stopped(work: Awaitable[None], stop: asyncio.Event) -> None:
    """Run `work` until it ends (stdin closed) or `stop` is set (a signal)."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in (task, stopping):
            t.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await t
    if task.done() and not task.cancelled() and (error := task.exception()) is not None:
        raise error


class BearerGuard:
    """Refuses every HTTP request without `Authorization: Bearer <token>` (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": UNAUTHORIZED})
                return
        await self.app(scope, receive, send)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


async def serve_http(
    server: HttpServable,
    stop: asyncio.Event,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Streamable HTTP at http://host:port/mcp until `stop` is set; port 0 picks one.

    With `token`, every request must carry it as a bearer token. Without one, only a
    loopback address is served: anyone who reached the port could otherwise ask for
    approvals, or run the proxy's `review: none` tools, in this gate's name.
    """
    if token is None and not _loopback(host):
        raise ConfigError(msg.NEED_MCP_TOKEN.format(host=host))
    # Given the host, the SDK turns on DNS-rebinding protection for loopback addresses.
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    if token is not None:
        app = BearerGuard(app, token)
    async with server.session_manager.run():
        served = await serve_asgi(app, host, port)
        try:
            if on_ready is not None:
                on_ready(served.url + MCP_PATH)
            await stop.wait()
        finally:
            await served.stop()
