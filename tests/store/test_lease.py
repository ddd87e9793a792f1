"""The notifier's entry lease against a real server: kept while its holder works, free
again soon after the holder dies, never renewed over someone else's."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.db.lease import Lease
from tests.support.poll import eventually


async def test_a_kept_lease_outlives_its_length_and_a_dropped_one_frees_soon(
    redis: Redis,
) -> None:
    mine = Lease(redis, "hitl:slack:lease:t", "a", seconds=1)
    theirs = Lease(redis, "hitl:slack:lease:t", "b", seconds=1)
    assert await mine.take()
    async with mine.kept():
        await asyncio.sleep(2.5)  # well past its length: the beat kept it
        assert not await theirs.take()
    # the holder stopped beating (as a killed process does): free within its length
    await eventually(theirs.take, what="the dropped lease taken", timeout_s=3)
    assert await redis.get("hitl:slack:lease:t") == "b"


async def test_the_beat_never_renews_a_lease_someone_else_took(redis: Redis) -> None:
    mine = Lease(redis, "hitl:slack:lease:u", "a", seconds=1)
    assert await mine.take()
    await redis.set("hitl:slack:lease:u", "b", ex=30)  # mine expired, b took it
    assert await mine._renew(keys=[mine.key], args=["a", 1]) == 0
    assert await redis.ttl("hitl:slack:lease:u") > 10


async def test_a_release_never_deletes_a_lease_someone_else_took(redis: Redis) -> None:
    mine = Lease(redis, "hitl:slack:lease:v", "a", seconds=1)
    theirs = Lease(redis, "hitl:slack:lease:v", "b", seconds=30)
    third = Lease(redis, "hitl:slack:lease:v", "c", seconds=30)
    assert await mine.take()
    await redis.delete("hitl:slack:lease:v")  # mine expired while its holder worked...
    assert await theirs.take()  # ...and b took the entry over
    assert not await mine.release()  # a's late release leaves b's lease alone
    assert await redis.get("hitl:slack:lease:v") == "b"
    assert not await third.take()  # so no third process delivers the message again
    assert await theirs.release()
    assert await redis.get("hitl:slack:lease:v") is None
