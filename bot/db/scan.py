"""Reading every key of one kind by SCAN, for operator maintenance only (`hitl-bot
maintenance ...`: bot/store/run/run_upkeep.py, question_upkeep.py). Listings read indexes."""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis


async def key_names(redis: Redis, match: str, *, batch: int = 500) -> list[str]:
    """Every key name matching the SCAN pattern `match`."""
    return [
        raw.decode() if isinstance(raw, bytes) else str(raw)
        async for raw in redis.scan_iter(match=match, count=batch)
    ]


async def hashes(redis: Redis, names: list[str], *, batch: int = 500) -> list[dict[str, str]]:
    """The hashes named, `batch` to a round trip; one gone since (expired between the
    SCAN and the read) is left out."""
    found: list[dict[str, str]] = []
    for i in range(0, len(names), batch):
        pipe = redis.pipeline(transaction=False)
        for name in names[i : i + batch]:
            pipe.hgetall(name)
        found += [h for h in cast(list[dict[str, str]], await pipe.execute()) if h]
    return found
