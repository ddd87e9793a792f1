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
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from bot.sdk import messages as msg

T = TypeVar("T")
CLOSE_GRACE_S = 10.0  # how long calls cancelled by close() may take to withdraw their requests


class LoopThread:
    def __init__(self, name: str = "hitl-gate") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._calls: set[asyncio.Task[Any]] = set()  # touched on the loop's thread only

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
        loop = self._ensure()
        future = asyncio.run_coroutine_threadsafe(self._as_call(coro), loop)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            if self._loop is not loop:  # close() cancelled it: say so, not a bare cancel
                raise RuntimeError(msg.GATE_CLOSED) from None
            raise
        except BaseException:
            future.cancel()  # KeyboardInterrupt here: stop the coroutine too
            raise

    async def _as_call(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._calls.add(task)
        try:
            return await coro
        finally:
            self._calls.discard(task)

    def close(self, last: Coroutine[Any, Any, None] | None = None) -> None:
        """Cancel the calls still running on the loop, then run `last` (closing
        connections), then stop and join it.

        A sync caller blocked in `call` on another thread would otherwise wait forever
        on a loop that no longer runs. Cancelled first, while the connections are
        still open, each call withdraws its request as a caller who stops waiting
        does, and its thread gets RuntimeError(GATE_CLOSED).
        """
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            if last is not None:
                last.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(_cancel_the_rest(self._calls), loop).result()
            if last is not None:
                asyncio.run_coroutine_threadsafe(last, loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


async def _cancel_the_rest(calls: set[asyncio.Task[Any]]) -> None:
    """The callers' calls first, and only them: a call's own helpers (the create it
    finishes after its caller is gone, the withdrawal) must run while it winds down,
    or a request created in that moment stays in review for nobody. Then what is left.
    Both share one grace period, as a single sweep had."""
    until = asyncio.get_running_loop().time() + CLOSE_GRACE_S
    await _cancelled(list(calls), until)
    me = asyncio.current_task()
    await _cancelled([t for t in asyncio.all_tasks() if t is not me], until)


async def _cancelled(tasks: list[asyncio.Task[Any]], until: float) -> None:
    for t in tasks:
        t.cancel()
    if tasks:
        left = until - asyncio.get_running_loop().time()
        await asyncio.wait(tasks, timeout=max(0.0, left))
