"""The agents the running workers offer, so a mention can start the team's own.

Each worker announces the agents its operator named (`--agent`) with its heartbeat, each
entry good for a while past it; a worker that stops simply stops renewing. One sorted
set, agent name -> until when: no SCAN, and a dead worker's agents age out by score.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from redis.asyncio import Redis

from bot.clock import Clock, wall_ms
from bot.store import keys

OFFER_MS = 90_000  # an announcement lasts this long: several heartbeats


class AgentDirectory:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms) -> None:
        self.redis = redis
        self.clock = clock

    async def announce(self, names: Iterable[str], *, for_ms: int = OFFER_MS) -> None:
        until = self.clock() + for_ms
        mapping = {name: until for name in names}
        if not mapping:
            return
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(keys.AGENTS_OFFERED, mapping, gt=True)  # never shortens another's offer
        pipe.zremrangebyscore(keys.AGENTS_OFFERED, "-inf", f"({self.clock()}")
        await pipe.execute()

    async def offered(self) -> list[str]:
        """The agents some live worker offers now, by name."""
        got = await self.redis.zrangebyscore(keys.AGENTS_OFFERED, f"({self.clock()}", "+inf")
        return sorted(str(n) for n in cast(list[str], got))
