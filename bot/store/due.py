"""The timers in each shard's expiry index (`keys.due`), as the sweeper walks them.

The transition scripts arm and move the timers; a sweeper reads what is due and
drops the stale ones (fenced by version, so of two sweepers the second is a no-op).
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.store import keys
from bot.store.requests import RequestStore


class DueTimers:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    @classmethod
    def beside(cls, requests: RequestStore) -> DueTimers:
        """The timers of the store `requests` works on."""
        return cls(requests.redis)

    async def due(self, shard: int, now_ms: int, *, start: int, count: int) -> list[str]:
        """Members (`keys.due_member`) due by `now_ms`, earliest first, from `start` on."""
        got = await self.redis.zrangebyscore(
            keys.due(shard), "-inf", now_ms, start=start, num=count
        )
        return cast(list[str], got)

    async def drop(self, shard: int, members: list[str]) -> None:
        if members:
            await self.redis.zrem(keys.due(shard), *members)
