"""Push-based waiting: block on an item's wake stream until it changes, with a deadline.

The stream entry ids are the item's versions, so a waiter that read version v
asks for anything after `v-0`: a change that lands between the read and the
block is still seen, and a wait that starts after the decision returns at once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from redis.asyncio import Redis


class Versioned(Protocol):
    @property
    def version(self) -> int: ...


T = TypeVar("T", bound=Versioned)


async def wait_until(
    redis: Redis,
    wake_key: str,
    load: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    timeout_s: float,
) -> T:
    """The item once `done(item)` holds, or as it stands when `timeout_s` runs out."""
    deadline = time.monotonic() + max(0.0, timeout_s)
    item = await load()
    while not done(item):
        left_ms = int((deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            break
        # block=0 would mean forever in Redis, so never pass it.
        await redis.xread({wake_key: f"{item.version}-0"}, count=1, block=max(1, left_ms))
        item = await load()
    return item
