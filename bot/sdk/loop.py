"""A private event loop on a daemon thread, for calling the async gate from sync code.

One loop per `Gate`, started on first sync use, keeps one connection pool for
every sync call. (`asyncio.run` per call would open and close a pool, and in
embedded mode look for the Valkey server, on every gated call; and it cannot
run inside a thread whose loop is already running, which this can.)
Only the gate's I/O runs here: the gated function itself runs in the caller's
thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from bot.sdk import messages as msg

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "hitl-gate") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    @property
    def running(self) -> bool:
        return self._loop is not None

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the private loop and block this thread until it finishes."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError(msg.SYNC_IN_GATE_LOOP)
        future = asyncio.run_coroutine_threadsafe(coro, self._ensure())
        try:
            return future.result()
        except BaseException:
            future.cancel()  # KeyboardInterrupt here: stop the coroutine too
            raise

    def close(self, last: Coroutine[Any, Any, None] | None = None) -> None:
        """Run `last` (closing connections) on the loop, then stop and join it."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            if last is not None:
                last.close()
            return
        try:
            if last is not None:
                asyncio.run_coroutine_threadsafe(last, loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
