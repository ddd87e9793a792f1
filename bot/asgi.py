"""Serving an ASGI app with uvicorn inside the current event loop: the bot's HTTP server,
the MCP gateway's, and the local Slack emulator's and scripted models'."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn

try:  # uvicorn's parser in C; h11, pure Python, costs ~0.2 ms more CPU per request
    import httptools  # noqa: F401

    HTTP_PARSER = "httptools"
except ImportError:  # pragma: no cover - a dependency; an install without it still serves
    HTTP_PARSER = "h11"

_TICK_S = 0.1  # uvicorn's own: its once-a-second work (the Date header) counts these


class _Server(uvicorn.Server):
    """uvicorn that leaves signals alone (the process that embeds it owns them) and stops
    as soon as it is told: uvicorn's own loop looks at `should_exit` only between 0.1 s
    sleeps, which every stop paid half of on average."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._exit = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def main_loop(self) -> None:
        ticks = 0
        while not await self.on_tick(ticks):
            ticks = (ticks + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit.wait(), _TICK_S)

    def exit(self) -> None:
        self.should_exit = True
        self._exit.set()


@dataclass
class Served:
    server: _Server
    task: asyncio.Task[None]
    url: str
    port: int

    async def stop(self) -> None:
        self.server.exit()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 10)


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening-ready socket on `host`:`port` (0: any free port), bound here rather than
    in uvicorn, which exits the process on a busy port: here it raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


async def serve_asgi(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    sock: socket.socket | None = None,
    ws: str = "none",
    graceful_s: int = 5,
) -> Served:
    """Start `app` and return once it listens; port 0 picks a free port. `sock`, already
    bound, is served instead of binding `host`:`port` (a busy port then raises OSError
    in the caller, not inside uvicorn)."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        ws=ws,
        http=HTTP_PARSER,
        timeout_graceful_shutdown=graceful_s,  # a pending long-poll must not hold up a stop
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock] if sock else None))
    while not server.started:
        if task.done():
            task.result()  # raises the bind error, or whatever stopped it
            raise RuntimeError(f"uvicorn stopped before listening on {host}:{port}")
        await asyncio.sleep(0.005)
    bound = server.servers[0].sockets[0].getsockname()
    shown = f"[{host}]" if ":" in host else host
    return Served(server, task, f"http://{shown}:{bound[1]}", int(bound[1]))
