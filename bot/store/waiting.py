"""Push-based waiting: wait until an item's wake stream moves past the version read.

The stream entry ids are the item's versions, so a waiter that read version v
waits for anything after `v-0`: a change that lands between the read and the
wait is still seen, and a wait that starts after the decision returns at once.
The blocking itself is the process's wait hub (bot/db/hub.py): one reader
per shard, so waiters cost no Redis connection each.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from redis.asyncio import Redis

from bot.db.hub import hub_for

# An item's wake stream: the scripts add an entry per version and keep the newest few
# (a waiter reads only past its own version); one nobody moves for this long expires.
WAKE_MAXLEN = 16
WAKE_TTL_S = 86_400


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
        left = deadline - time.monotonic()
        if left <= 0:
            break
        await hub_for(redis).changed(wake_key, item.version, left)
        item = await load()
    return item
