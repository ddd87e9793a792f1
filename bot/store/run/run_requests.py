"""A run's calls: an index by run, so `hitl-bot show RUN` reads the run's own requests
instead of every request made since the run started.

`hitl:{run:ID}:requests` (bot/store/keys.py) is a sorted set of request ids by creation
time. It sits in the run's slot, not the requests' (a request's keys are in its shard),
so it is written in a step of its own, before the request's script: an entry may name
a request never written (a crash, a create the run's correction stopped) or another
identity's, and readers keep only records that name the run. Kept as long as a run's
record is (RUN_TTL_S) after its last call.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.store import keys

INDEX_TTL_S = 30 * 86_400  # as a run's record (bot/store/run/runs.py RUN_TTL_S)


async def index(redis: Redis, run_id: str, rid: str, created_at: int) -> None:
    """Add a request to its run's index (first time kept: a retry of the same call)."""
    key = keys.run_requests(run_id)
    pipe = redis.pipeline(transaction=True)
    pipe.zadd(key, {rid: created_at}, nx=True)
    pipe.expire(key, INDEX_TTL_S)
    await pipe.execute()


async def ids(redis: Redis, run_id: str) -> list[str]:
    """The ids in the run's index, oldest first (entries readers must still check)."""
    return cast(list[str], await redis.zrange(keys.run_requests(run_id), 0, -1))
