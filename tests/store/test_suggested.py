"""The kept summary of policy suggestions: mined by one caller an hour, given back when
the mining fails, and refused whole when the record is damaged."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.core.suggestions.summary import MINED_EVERY_MS, summarize
from bot.store import keys
from bot.store.figures.suggested import Suggested

HOUR_START = 500_000 * MINED_EVERY_MS


async def test_one_mining_an_hour_however_many_check(redis: Redis) -> None:
    a, b = Suggested(redis), Suggested(redis)
    assert await a.claim(HOUR_START + 10)
    assert not await b.claim(HOUR_START + MINED_EVERY_MS - 1)  # the same hour
    await a.give_back(HOUR_START + 10)  # a failed mining: the next check tries again
    assert await b.claim(HOUR_START + 20)
    assert await a.claim(HOUR_START + MINED_EVERY_MS)  # the next hour


async def test_the_summary_round_trips_and_a_damaged_one_is_refused(redis: Redis) -> None:
    kept = Suggested(redis)
    assert await kept.load() is None
    summary = summarize([], 12, HOUR_START, HOUR_START - 30 * 86_400_000)
    await kept.save(summary)
    assert await kept.load() == summary
    await redis.set(keys.suggestions(), '{"computed_at": "soon"}')
    with pytest.raises(ValueError):
        await kept.load()
