"""Corrections are a queue; each one is consumed at most once, even under races."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from bot.store.run.steering import SteeringStore
from tests.support.clients import open_client


async def test_each_correction_is_consumed_once(redis: Redis, redis_url: str) -> None:
    steer = SteeringStore(redis)
    for i in range(50):
        await steer.push("run1", f"fix {i}", actor="U1")
    assert await steer.pending("run1") == 50

    async def consumer() -> list[str]:
        client = await open_client(redis_url)
        got = []
        try:
            mine = SteeringStore(client)
            while (s := await mine.pop("run1")) is not None:
                got.append(s.text)
        finally:
            await client.aclose()
        return got

    results = await asyncio.gather(*(consumer() for _ in range(5)))
    flat = [t for r in results for t in r]
    assert sorted(flat) == sorted(f"fix {i}" for i in range(50))
    assert len(flat) == len(set(flat))
    assert await steer.pop("run1") is None


async def test_queue_keeps_order(redis: Redis) -> None:
    steer = SteeringStore(redis)
    await steer.push("r", "No, wait! The penguin!", actor="UKID")
    await steer.push("r", "stop", actor="UDAD", hard_stop=True)
    first, second = await steer.pop("r"), await steer.pop("r")
    assert first is not None and first.text == "No, wait! The penguin!"
    assert second is not None and second.hard_stop
