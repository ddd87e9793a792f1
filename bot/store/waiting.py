"""Push-based waiting: wait until an item's wake stream moves past the version read.

The stream entry ids are the item's versions, so a waiter that read version v
waits for anything after `v-0`: a change that lands between the read and the
wait is still seen, and a wait that starts after the decision returns at once.
The blocking itself is the process's wait hub (bot/db/hub.py): one reader
per shard, so waiters cost no Redis connection each.

The scripts write a version only to a stream that exists (most items nobody
waits on, and those get none), so the waiter makes its item's stream before it
reads the item (scripts/wait.lua): a transition after that read finds the stream;
one before it, the read sees. It makes it again before every read, which also
keeps the stream alive for as long as anyone waits. A request is also marked as
waited on in the same step (codec.py WATCHED), so the transitions of one nobody
waits on skip the wake without a command.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from redis.asyncio import Redis

from bot.db.hub import hub_for
from bot.store.scripts import WAIT, WAKE_TTL_S

# One wait on the hub never outlasts the stream it watches: past this, the waiter
# reads again, which first makes the stream live another WAKE_TTL_S.
LONGEST_BLOCK_S = WAKE_TTL_S / 2


class Versioned(Protocol):
    @property
    def version(self) -> int: ...


T = TypeVar("T", bound=Versioned)


async def wait_until(
    redis: Redis,
    item_keys: tuple[str, str],
    load: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    timeout_s: float,
    *,
    flag: str = "",
) -> T:
    """The item once `done(item)` holds, or as it stands when `timeout_s` runs out.
    `item_keys`: the item's hash and its wake stream (bot/store/keys.py), one slot;
    `flag`: the item's field its scripts read to know someone waits (wait.lua), if any."""
    deadline = time.monotonic() + max(0.0, timeout_s)
    arm = redis.register_script(WAIT)
    while True:
        if deadline > time.monotonic():  # it may wait: the stream before the read
            await arm(keys=list(item_keys), args=[WAKE_TTL_S, flag])
        item = await load()
        left = deadline - time.monotonic()
        if done(item) or left <= 0:
            return item
        await hub_for(redis).changed(item_keys[1], item.version, min(left, LONGEST_BLOCK_S))
