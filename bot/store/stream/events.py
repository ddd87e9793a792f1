"""The notification stream: what happened, for whoever must tell people about it.

Each shard has a stream written in the same atomic step as the change it
reports. Readers use a consumer group and acknowledge an entry only once it is
delivered (to Slack, say); an entry left unacknowledged is claimed again after
a pause, which makes the stream the outbox too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from bot.db.cluster import fails_over, is_cluster, retry_startup
from bot.store import keys

MAXLEN = 100_000  # a backstop: serve trims what every group acknowledged (events_trim.py)


@dataclass(frozen=True)
class Notice:
    stream: str
    entry_id: str
    kind: str  # request | question | run | steer
    id: str
    event: str
    state: str
    version: int
    fields: dict[str, str]


def _notice(stream: str, entry_id: str, f: dict[str, str]) -> Notice:
    return Notice(
        stream,
        entry_id,
        f.get("kind", ""),
        f.get("id", ""),
        f.get("event", ""),
        f.get("state", ""),
        # Scripts write digits; an entry another writer garbled must not fail the whole
        # read, and with it every entry after it, on every try.
        int(v) if (v := f.get("version", "")).isascii() and v.isdigit() else 0,
        f,
    )


async def publish(redis: Redis, item_id: str, fields: dict[str, Any]) -> None:
    """Publish outside a script, on the shard of `item_id` (runs and steering)."""
    await redis.xadd(
        keys.events(keys.shard_of(item_id)),
        {k: str(v) for k, v in fields.items()},
        maxlen=MAXLEN,
        approximate=True,
    )


NOTIFIER_GROUP = "slack"  # the Slack notifier's consumer group on every shard's stream


async def notifier_read_within(redis: Redis, idle_ms: int) -> bool:
    """Whether a Slack notifier read this store's events in the last `idle_ms`."""
    try:
        consumers = await redis.xinfo_consumers(keys.events(0), NOTIFIER_GROUP)
    except ResponseError:  # no stream or no group: no notifier has ever run here
        return False
    return any(int(c.get("idle", 0)) < idle_ms for c in consumers)


class EventBus:
    def __init__(self, redis: Redis, group: str) -> None:
        self.redis = redis
        self.group = group
        self.streams = [keys.events(s) for s in range(keys.SHARDS)]

    async def ensure_group(self) -> None:
        for stream in self.streams:
            await retry_startup(
                partial(self._create, stream),
                what=f"group on {stream}",
                cluster=fails_over(self.redis),
            )

    async def _create(self, stream: str) -> None:
        try:
            # From the start: events written before the first reader existed still count.
            await self.redis.xgroup_create(stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self, consumer: str, *, count: int = 100, block_ms: int = 1000) -> list[Notice]:
        if not is_cluster(self.redis):
            return await self._read(self.streams, consumer, count, max(1, block_ms))
        # On a cluster one XREADGROUP may name one slot only: a quick look at every
        # stream first, so a busy shard is not held up by the idle ones' blocks.
        out = await self._each(consumer, count, None)
        return out or await self._each(consumer, count, max(1, block_ms))

    async def _each(self, consumer: str, count: int, block: int | None) -> list[Notice]:
        reads = [self._read([s], consumer, count, block) for s in self.streams]
        return [n for got in await asyncio.gather(*reads) for n in got]

    async def _read(
        self, streams: list[str], consumer: str, count: int, block: int | None
    ) -> list[Notice]:
        got = await self.redis.xreadgroup(
            self.group, consumer, dict.fromkeys(streams, ">"), count=count, block=block
        )
        out = []
        for stream, entries in cast(list[tuple[str, list[tuple[str, dict[str, str]]]]], got or []):
            out += [_notice(stream, eid, f) for eid, f in entries]
        return out

    async def reclaim(self, consumer: str, *, min_idle_ms: int, count: int = 100) -> list[Notice]:
        """Entries another reader (or an earlier try) took but never acknowledged."""
        out: list[Notice] = []
        for stream in self.streams:
            res = await self.redis.xautoclaim(
                stream, self.group, consumer, min_idle_ms, start_id="0-0", count=count
            )
            for eid, f in cast(list[tuple[str, dict[str, str] | None]], res[1]):
                if f is not None:  # None: trimmed away while pending
                    out.append(_notice(stream, eid, f))
                else:
                    await self.redis.xack(stream, self.group, eid)
        return out

    async def ack(self, n: Notice) -> None:
        await self.redis.xack(n.stream, self.group, n.entry_id)

    async def backlog(self) -> int:
        """Entries read but not yet delivered: the outbox depth."""
        total = 0
        for stream in self.streams:
            try:
                info = await self.redis.xpending(stream, self.group)
            except ResponseError:
                continue
            total += int(info["pending"])
        return total
