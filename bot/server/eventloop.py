"""The event loop a long-running command runs on: asyncio's, or uvloop's when asked.

uvloop (libuv) spends less CPU per socket event than asyncio's own loop; how much
shows in `bench/api_throughput.py --loop`. It is opt-in (`HITL_UVLOOP=1`): the test suite,
the Socket Mode link (aiohttp) and redis-py's blocking readers are exercised on
asyncio's loop, and `tests/test_serve_uvloop.py` runs `serve` on uvloop. Asked for
and not installed is an error at startup, never a silent fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from bot import messages as msg
from bot.errors import ConfigError

T = TypeVar("T")


def loop_factory(uvloop: bool) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop maker when asked for (None: asyncio's default)."""
    if not uvloop:
        return None
    try:
        import uvloop as lib
    except ImportError:
        raise ConfigError(msg.UVLOOP_MISSING) from None
    return lib.new_event_loop


def run(main: Coroutine[Any, Any, T], *, uvloop: bool = False) -> T:
    """`asyncio.run(main)`, on uvloop if asked."""
    try:
        factory = loop_factory(uvloop)
    except BaseException:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
