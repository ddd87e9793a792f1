"""Serving an ASGI app with uvicorn inside the current event loop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn

try:  # uvicorn's parser in C; h11, pure Python, costs ~0.2 ms more CPU per request
    import httptools  # noqa: F401

    HTTP_PARSER = "httptools"
except ImportError:  # pragma: no cover - a dependency; an install without it still serves
    HTTP_PARSER = "h11"


class _Server(uvicorn.Server):
    """uvicorn that leaves signals alone: the process that embeds it owns them."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Served:
    server: _Server
    task: asyncio.Task[None]
    url: str

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 10)


async def serve_asgi(app: Any, host: str = "127.0.0.1", port: int = 0) -> Served:
    """Start `app` and return once it listens; port 0 picks a free port."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        ws="none",  # the bot serves no WebSocket: Socket Mode is a connection it opens
        http=HTTP_PARSER,
        timeout_graceful_shutdown=5,  # a pending 60 s long-poll must not hold up a stop
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # raises the bind error, or whatever stopped it
            raise RuntimeError(f"uvicorn stopped before listening on {host}:{port}")
        await asyncio.sleep(0.01)
    sock = server.servers[0].sockets[0].getsockname()
    return Served(server, task, f"http://{host}:{sock[1]}")
