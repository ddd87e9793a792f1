"""The gate's connections: one backend per event loop, and the private loop of sync calls.

Connections belong to an event loop, so a gate opens one backend (HTTP or Redis)
per loop it is used from; sync callers share one private loop thread
(`bot.sdk.bridge`). A base of `bot.sdk.gate.Gate`, which sets the attributes below.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from bot import messages as msg
from bot.config import Settings
from bot.core.policy import Policy
from bot.errors import ConfigError, needs_server_extra
from bot.sdk.backend import Backend
from bot.sdk.bridge import LoopThread
from bot.sdk.http import HttpBackend

T = TypeVar("T")


class Connections:
    api_url: str | None
    _api_token: str | None
    settings: Settings | None
    policy: Policy | None
    requester: str
    http_timeout_s: float
    _transport: httpx.AsyncBaseTransport | None
    _backends: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[Backend]]
    _sync: LoopThread

    async def _open(self) -> Backend:
        if self.api_url and self._api_token:
            return HttpBackend(
                self.api_url,
                self._api_token,
                timeout_s=self.http_timeout_s,
                transport=self._transport,
            )
        # Direct mode alone needs the store, its runtime and the embedded Valkey: they load
        # here, so a gate that speaks HTTP imports no server code (tests/sdk/test_import_weight.py).
        try:
            from bot.sdk.direct import DirectBackend
        except ModuleNotFoundError as exc:
            if needs_server_extra(exc):
                raise ConfigError(msg.NEEDS_SERVER.format(module=exc.name)) from None
            raise

        return await DirectBackend.open(self.settings, policy=self.policy, actor=self.requester)

    async def backend(self) -> Backend:
        """This event loop's backend, opened on first use."""
        loop = asyncio.get_running_loop()
        task = self._backends.get(loop)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = loop.create_task(self._open())
            self._backends[loop] = task
        return await asyncio.shield(task)

    async def _close_here(self) -> None:
        task = self._backends.pop(asyncio.get_running_loop(), None)
        if task is not None:
            with contextlib.suppress(Exception):
                await (await task).aclose()

    async def aclose(self) -> None:
        """Close this loop's connections, and the private loop if sync calls started it."""
        await self._close_here()
        if self._sync.running:
            await asyncio.to_thread(self._sync.close, self._close_here())

    def close(self) -> None:
        """Close the private loop used by sync calls (and its connections)."""
        self._sync.close(self._close_here())

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def run_sync(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine of this gate from sync code, on the gate's private loop."""
        return self._sync.call(coro)
