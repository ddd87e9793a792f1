"""The run queue: runs are entries of one Redis Stream, shared through a consumer group.

Each entry has one owner at a time: it sits in its owner's pending list until the
run is final, then it is acknowledged and deleted. An owner refreshes its entries
(XCLAIM to itself, idle time reset) while its runs wait on people; entries nobody
refreshed for `min_idle_ms` belong to a dead worker and are taken over (XAUTOCLAIM).
The worker (`bot.agent.worker`) decides what to do with them; this is the Redis side.
A read refused for a vanished group raises StoreError (`failures.is_missing_group`):
the caller makes the group again with `ensure_group`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from bot.db.cluster import fails_over, retry_startup
from bot.store import keys

GROUP = "workers"
Row = tuple[str, dict[str, str] | None]  # (stream entry id, its fields; None: deleted)


class RunQueue:
    def __init__(self, redis: Redis, *, group: str, consumer: str) -> None:
        self.redis = redis
        self.group = group
        self.consumer = consumer
        self._cursor = "0-0"  # where the next XAUTOCLAIM scan continues

    async def ensure_group(self) -> None:
        await retry_startup(
            self._create_group,
            what="creating the run queue's group",
            cluster=fails_over(self.redis),
        )

    async def _create_group(self) -> None:
        try:
            # From the start: runs queued before any worker existed still count.
            await self.redis.xgroup_create(keys.RUN_QUEUE, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self, count: int, *, block_ms: int | None, history: bool = False) -> list[Row]:
        """New entries (`history`: the ones this consumer already holds, from the start)."""
        got = await self.redis.xreadgroup(
            self.group,
            self.consumer,
            {keys.RUN_QUEUE: "0" if history else ">"},
            count=count,
            block=None if history else block_ms,
        )
        rows = cast(list[tuple[str, list[Row]]], got or [])
        return [e for _, entries in rows for e in entries]

    async def reclaim(self, count: int, *, min_idle_ms: int) -> list[Row]:
        """Entries whose owner stopped refreshing them, taken over by this consumer."""
        res = await self.redis.xautoclaim(
            keys.RUN_QUEUE,
            self.group,
            self.consumer,
            min_idle_ms,
            start_id=self._cursor,
            count=count,
        )
        self._cursor = str(res[0])
        return cast(list[Row], res[1])

    async def deliveries(self, entry_ids: Sequence[str]) -> list[int]:
        """How many times each entry was handed to a worker (refreshes do not count)."""
        if not entry_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for eid in entry_ids:
            pipe.xpending_range(keys.RUN_QUEUE, self.group, eid, eid, 1)
        rows = await pipe.execute()
        return [int(r[0]["times_delivered"]) if r else 0 for r in rows]

    async def ack(self, entry_id: str) -> None:
        # Deleted too: the stream must not grow forever, and trimming by MAXLEN could
        # drop a run that still waits for a person.
        pipe = self.redis.pipeline(transaction=True)
        pipe.xack(keys.RUN_QUEUE, self.group, entry_id)
        pipe.xdel(keys.RUN_QUEUE, entry_id)
        await pipe.execute()

    async def owned(self, entry_ids: Sequence[str]) -> list[str]:
        """Which of `entry_ids` are still in this consumer's pending list."""
        pipe = self.redis.pipeline(transaction=False)
        for eid in entry_ids:
            pipe.xpending_range(keys.RUN_QUEUE, self.group, eid, eid, 1)
        rows = await pipe.execute()
        return [
            eid
            for eid, row in zip(entry_ids, rows, strict=True)
            if row and row[0]["consumer"] == self.consumer
        ]

    async def claim(self, entry_ids: Sequence[str], *, idle_ms: int = 0) -> None:
        """Take `entry_ids` (already ours) again, setting their idle time to `idle_ms`."""
        ids: list[Any] = list(entry_ids)
        await self.redis.xclaim(
            keys.RUN_QUEUE, self.group, self.consumer, 0, ids, idle=idle_ms, justid=True
        )
