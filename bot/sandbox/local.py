"""An ASGI app served by uvicorn on a loopback port, in a task of the caller's loop: how
the scripted model servers (OpenAI's and Anthropic's) listen for the demo and the tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import uvicorn


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the host process (a test, the demo) owns SIGINT and SIGTERM, not uvicorn


class LocalServer:
    def __init__(self, app: Any, what: str) -> None:
        self.app = app
        self.what = what  # named in the error when it stops before it listens
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen on `host`:`port` (0: any free port); the port it got."""
        config = uvicorn.Config(
            self.app, host=host, port=port, log_level="warning", lifespan="off", ws="none"
        )
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises why it could not start
                raise RuntimeError(f"{self.what} stopped before it started")
            await asyncio.sleep(0.005)
        return int(self._server.servers[0].sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        self._server = self._task = None
