"""A run's own audit: steering consumed, refused stops and steers, resumes, its end.

One JSON object per list element, appended in order and kept as long as the run
(`RUN_TTL_S`). Every writer goes through `append`, so the key and its expiry are set
in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from redis.asyncio import Redis

from bot.store import keys
from bot.store.run.runs import RUN_TTL_S

RUN_AUDIT_TTL_S = RUN_TTL_S  # a run's audit lives as long as the run it tells of


class RunAudit:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def append(self, run_id: str, entry: Mapping[str, Any]) -> None:
        key = keys.run_audit(run_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.rpush(key, json.dumps(entry, ensure_ascii=False))
        pipe.expire(key, RUN_AUDIT_TTL_S)
        await pipe.execute()

    async def entries(self, run_id: str) -> list[dict[str, Any]]:
        """Every entry of the run's audit, oldest first."""
        raw = cast(list[str], await self.redis.lrange(keys.run_audit(run_id), 0, -1))
        return [json.loads(line) for line in raw]
