"""Serve an ASGI app with uvicorn inside the running event loop, on a free port if asked.

Used by the emulator and handy for tests that need a second server (a fake bot).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves the process's signal handlers alone."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class BackgroundServer:
    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> str:
        """Start serving; returns the base URL (with the port the OS picked for port 0)."""
        if self._task is not None:
            return self.base_url
        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
            # Socket Mode's WebSocket; wsproto is pure Python and needs no deprecated API
            ws="wsproto",
        )
        # bind here, not in uvicorn: a busy port raises OSError instead of exiting
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        self._socket = sock
        self.port = sock.getsockname()[1]
        server = _QuietServer(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if self._task.done():
                await self.stop()
                raise RuntimeError(f"could not serve on {self.base_url}")
            await asyncio.sleep(0.01)
        return self.base_url

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            try:
                await self._task
            finally:
                self._server, self._task = None, None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
