"""Serving an MCP server on stdio or on streamable HTTP, until stopped.

Both the high-level `MCPServer` (`serve`) and the low-level `Server` (`proxy`) offer
`streamable_http_app()` and its `session_manager`; only stdio differs, so the
caller passes how to run that.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from bot.asgi import serve_asgi

MCP_PATH = "/mcp"


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
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


async def serve_http(
    server: HttpServable,
    stop: asyncio.Event,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Streamable HTTP at http://host:port/mcp until `stop` is set; port 0 picks one."""
    # Given the host, the SDK turns on DNS-rebinding protection for loopback addresses.
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    async with server.session_manager.run():
        served = await serve_asgi(app, host, port)
        try:
            if on_ready is not None:
                on_ready(served.url + MCP_PATH)
            await stop.wait()
        finally:
            await served.stop()
