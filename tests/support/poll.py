"""Waiting in tests for what happens in another task, thread or process.

A test polls only what it cannot await: a card in the Slack emulator, a gauge in
/metrics, a line a child process prints, a waiter a wait hub holds. Every wait here has a
deadline: DEFAULT_TIMEOUT_S, unless the call passes a longer one for work that is slow by
nature (a process start, a failover, hundreds of waiters). When the deadline passes, the
failure names what was awaited and the last value the probe returned.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 10.0
INTERVAL_S = 0.02  # between two probes: short next to any deadline, long next to a probe
_SHOWN = 600  # characters of the last value in a failure


class _NotYet:
    def __repr__(self) -> str:
        return "nothing (the probe never returned)"


_NOT_YET = _NotYet()


@overload
async def eventually(
    probe: Callable[[], Awaitable[T | None]],
    ok: None = None,
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T: ...


@overload
async def eventually(
    probe: Callable[[], Awaitable[T]],
    ok: Callable[[T], object],
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T: ...


@overload
async def eventually(
    probe: Callable[[], T | None],
    ok: None = None,
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T: ...


@overload
async def eventually(
    probe: Callable[[], T],
    ok: Callable[[T], object],
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T: ...


async def eventually(
    probe: Callable[[], Any],
    ok: Callable[[Any], object] | None = None,
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> Any:
    """The first value of `probe()` that holds: `ok(value)` is true, or, without `ok`,
    the value itself is. `probe` may be a plain function or return an awaitable. An
    exception of a type in `ignoring` counts as "not yet"; any other one fails at once."""
    deadline = time.monotonic() + timeout_s
    last: object = _NOT_YET
    while True:
        try:
            value = probe()
            if inspect.isawaitable(value):
                value = await value
        except ignoring as exc:
            last = exc
        else:
            if _holds(value, ok):
                return value
            last = value
        if time.monotonic() >= deadline:
            raise AssertionError(_failure(probe, what, timeout_s, last))
        await asyncio.sleep(interval_s)


@overload
def eventually_sync(
    probe: Callable[[], T | None],
    ok: None = None,
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T: ...


@overload
def eventually_sync(
    probe: Callable[[], T],
    ok: Callable[[T], object],
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T: ...


def eventually_sync(
    probe: Callable[[], Any],
    ok: Callable[[Any], object] | None = None,
    *,
    what: str = "",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = INTERVAL_S,
    ignoring: tuple[type[BaseException], ...] = (),
) -> Any:
    """`eventually` for code without an event loop (fixtures of processes, threads)."""
    deadline = time.monotonic() + timeout_s
    last: object = _NOT_YET
    while True:
        try:
            value = probe()
        except ignoring as exc:
            last = exc
        else:
            if _holds(value, ok):
                return value
            last = value
        if time.monotonic() >= deadline:
            raise AssertionError(_failure(probe, what, timeout_s, last))
        time.sleep(interval_s)


def _holds(value: object, ok: Callable[[Any], object] | None) -> bool:
    return bool(value if ok is None else ok(value))


def _failure(probe: Callable[[], object], what: str, timeout_s: float, last: object) -> str:
    shown = repr(last)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN] + "..."
    return f"{what or _describe(probe)}: did not hold within {timeout_s:g} s; last seen: {shown}"


def _describe(probe: Callable[[], object]) -> str:
    """A probe's name or, for a lambda, its source line: what the test waited for."""
    name = getattr(probe, "__qualname__", "")
    if name and "<lambda>" not in name:
        return name
    try:
        return inspect.getsource(probe).strip()
    except (OSError, TypeError):
        return repr(probe)
