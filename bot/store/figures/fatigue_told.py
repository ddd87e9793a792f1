"""Which fatigue signals the operators were told of today (bot/core/fatigue_signals.py).

A signal is claimed for the day (UTC, by the clock serve runs on) before it is sent,
with SET NX: of several `serve` processes checking at once, one tells it, and nobody
again that day. A send that fails gives the claim back, so the next check tries again
instead of the signal going unsaid for a day. Claims expire two days on.
"""

from __future__ import annotations

from redis.asyncio import Redis

from bot.store import keys

DAY_MS = 86_400_000


class FatigueTold:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def claim(self, signal: str, now_ms: int) -> bool:
        """True for the one caller that tells `signal` now; False if it was told today."""
        key = keys.fatigue_told(signal, now_ms // DAY_MS)
        return bool(await self.redis.set(key, now_ms, nx=True, px=2 * DAY_MS))

    async def give_back(self, signal: str, now_ms: int) -> None:
        await self.redis.delete(keys.fatigue_told(signal, now_ms // DAY_MS))

    async def checked(self, now_ms: int) -> None:
        await self.redis.set(keys.fatigue_checked(), now_ms)

    async def last_checked(self) -> int | None:
        got = await self.redis.get(keys.fatigue_checked())
        return int(got) if got else None
