"""Corrections queued for a run. Each is handed to exactly one tool-call check."""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.ids import new_steering_id
from bot.core.models import Steering
from bot.store import keys
from bot.store.events import publish

QUEUE_TTL_S = 7 * 86_400  # a run idle for a week has no one left to steer


class SteeringStore:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms, ids: IdFactory = new_id) -> None:
        self.redis = redis
        self.clock = clock
        self.ids = ids

    async def push(
        self,
        run_id: str,
        text: str,
        *,
        actor: str,
        hard_stop: bool = False,
        source: str | None = None,
    ) -> Steering:
        s = Steering(
            id=new_steering_id(self.ids),
            run_id=run_id,
            text=text,
            actor=actor,
            at=self.clock(),
            hard_stop=hard_stop,
            source=source,
        )
        key = keys.steering(run_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.rpush(key, s.model_dump_json())
        pipe.expire(key, QUEUE_TTL_S)
        await pipe.execute()
        await publish(
            self.redis,
            run_id,
            {
                "kind": "steer",
                "id": s.id,
                "event": "queued",
                "state": "queued",
                "version": 0,
                "run_id": run_id,
                "source": source or "",
            },
        )
        return s

    async def pop(self, run_id: str) -> Steering | None:
        """The oldest queued correction, removed atomically: no two consumers get it."""
        raw = await self.redis.lpop(keys.steering(run_id))
        return None if raw is None else Steering.model_validate_json(cast(str, raw))

    async def pop_and_stop(self, run_id: str) -> tuple[Steering | None, bool]:
        """`pop`, and whether a person asked the run to stop, in one round trip: an agent
        checks both before every tool call. The queue and the run share a hash slot."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.lpop(keys.steering(run_id))
        pipe.hget(keys.run(run_id), "stop_requested")
        raw, stop = await pipe.execute()
        s = None if raw is None else Steering.model_validate_json(cast(str, raw))
        return s, stop == "1"

    async def consumed(self, run_id: str, s: Steering) -> None:
        """Announce that the run's agent read the correction (Slack ticks it off)."""
        await publish(
            self.redis,
            run_id,
            {
                "kind": "steer",
                "id": s.id,
                "event": "consumed",
                "state": "consumed",
                "version": 0,
                "run_id": run_id,
                "source": s.source or "",
            },
        )

    async def pending(self, run_id: str) -> int:
        return int(await self.redis.llen(keys.steering(run_id)))
