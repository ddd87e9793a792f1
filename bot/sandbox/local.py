"""An ASGI app served by uvicorn on a loopback port, in a task of the caller's loop: how
the scripted model servers (OpenAI's and Anthropic's) listen for the demo and the tests."""

from __future__ import annotations

from typing import Any

from bot.asgi import Served, serve_asgi


class LocalServer:
    def __init__(self, app: Any, what: str) -> None:
        self.app = app
        self.what = what  # named in the error when it stops before it listens
        self._served: Served | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen on `host`:`port` (0: any free port); the port it got."""
        try:
            self._served = await serve_asgi(self.app, host, port)
        except RuntimeError as e:
            raise RuntimeError(f"{self.what} stopped before it started") from e
        return self._served.port

    async def stop(self) -> None:
        if self._served is not None:
            await self._served.stop()
        self._served = None
