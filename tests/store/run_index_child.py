"""Runs started (or finished) in a process of its own, for the kill -9 tests of the run
indexes: it hangs, to be killed, once a run's record is written and before the index
step (`start`: the third run's start; `finish`: the first run's finish).

    python -m tests.store.run_index_child REDIS_URL start|finish MARKER_FILE [cluster]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster

from bot.core.models import RunState
from bot.store.run import run_index
from bot.store.stores import StoreSet


async def main(url: str, mode: str, marker: Path, cluster: bool) -> None:
    # the test's HITL_ settings are not passed on (tests/support/children.py): told by argument
    if cluster:
        redis = cast(Redis, RedisCluster.from_url(url, decode_responses=True))
        await redis.initialize()  # type: ignore[attr-defined]
    else:
        redis = Redis.from_url(url, decode_responses=True)
    runs = StoreSet(redis).runs
    hang = asyncio.Event()
    started: list[str] = []
    entered, turned = run_index.entered, run_index.turned

    async def entering(r: Any, run_id: str, *args: Any) -> None:
        started.append(run_id)
        if mode == "start" and len(started) == 3:
            marker.write_text(run_id)  # the record is written, the index not yet
            await hang.wait()
        await entered(r, run_id, *args)

    async def turning(r: Any, run_id: str, *args: Any, **kw: Any) -> None:
        if mode == "finish":
            marker.write_text(run_id)  # the record says finished, the index not yet
            await hang.wait()
        await turned(r, run_id, *args, **kw)

    run_index.entered, run_index.turned = entering, turning  # type: ignore[assignment]
    for i in range(3):
        run = await runs.start(agent="claw", prompt=f"p{i}", requester="U1")
    await runs.update(run.id, state=RunState.FINISHED)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4:] == ["cluster"]))
