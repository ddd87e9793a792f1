"""Serve an ASGI app with uvicorn inside the running event loop, on a free port if asked.

Used by the emulator and handy for tests that need a second server (a fake bot).
"""

from __future__ import annotations

import socket

from starlette.types import ASGIApp

from bot.asgi import Served, bind_tcp, serve_asgi


class BackgroundServer:
    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._served: Served | None = None
        self._socket: socket.socket | None = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> str:
        """Start serving; returns the base URL (with the port the OS picked for port 0)."""
        if self._served is not None:
            return self.base_url
        sock = bind_tcp(self.host, self.port)  # a busy port raises OSError, not an exit
        self._socket = sock
        self.port = sock.getsockname()[1]
        try:
            # Socket Mode's WebSocket; wsproto is pure Python and needs no deprecated API
            self._served = await serve_asgi(
                self.app, self.host, self.port, sock=sock, ws="wsproto", graceful_s=1
            )
        except Exception as e:  # whatever stopped uvicorn: the socket is ours to close
            await self.stop()
            raise RuntimeError(f"could not serve on {self.base_url}") from e
        return self.base_url

    async def stop(self) -> None:
        served, self._served = self._served, None
        if served is not None:
            await served.stop()
        if self._socket is not None:
            self._socket.close()
            self._socket = None
