"""The policy suggestions serve mined last (bot/core/suggestions/summary.py), kept for the
operators' App Home, which reads them in one GET.

Mining is claimed for the hour (by the clock serve runs on) with SET NX before it runs,
as the fatigue signals are claimed for the day (fatigue_told.py): of several `serve`
processes checking, one mines each hour. A mining that fails gives the claim back, so
the next check tries again. Claims expire two hours on; the summary is kept until the
next one replaces it, and says when it was made.
"""

from __future__ import annotations

from redis.asyncio import Redis

from bot.core.suggestions.summary import MINED_EVERY_MS, Summary
from bot.store import keys


class Suggested:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def claim(self, now_ms: int) -> bool:
        """True for the one caller that mines in the hour of `now_ms`."""
        key = keys.suggestions_mined(now_ms // MINED_EVERY_MS)
        return bool(await self.redis.set(key, now_ms, nx=True, px=2 * MINED_EVERY_MS))

    async def give_back(self, now_ms: int) -> None:
        await self.redis.delete(keys.suggestions_mined(now_ms // MINED_EVERY_MS))

    async def save(self, summary: Summary) -> None:
        await self.redis.set(keys.suggestions(), summary.model_dump_json())

    async def load(self) -> Summary | None:
        """The last summary; None before the first mining. ValueError (pydantic's
        ValidationError) when the record is damaged."""
        raw = await self.redis.get(keys.suggestions())
        return None if raw is None else Summary.model_validate_json(raw)
