"""Corrections queued for a run. Each is handed to exactly one tool-call check."""

from __future__ import annotations

import builtins
from typing import cast

from redis.asyncio import Redis

from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.ids import new_steering_id
from bot.core.models import Steering
from bot.db.replicas import acks_for
from bot.store import keys
from bot.store.run.run_signals import followed
from bot.store.scripts.common import WAITING_TTL_S
from bot.store.stream.events import publish

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
        # after the write, in the same step: a worker that keeps the run's state
        # locally reads the store again (bot/store/run/run_signals.py)
        if followed(self.redis):
            pipe.publish(keys.run_signal(run_id), "1")
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

    async def confirm_saved(self, run_id: str) -> None:
        """Raise NotReplicated unless the replicas asked for (HITL_REPLICA_ACKS) hold the
        run's queue as it stands: everything pushed to it so far."""
        await acks_for(self.redis).confirm(keys.steering(run_id))

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

    async def add_waiting(self, run_id: str, rid: str) -> None:
        """Put a request in the run's waiting set, where CREATE cannot (on a cluster the
        run's keys are in another slot than the request's)."""
        await add_waiting(self.redis, run_id, rid)

    async def waiting(self, run_id: str) -> builtins.list[str]:
        """The requests and questions the run filed and has not seen leave (some may have
        been decided or answered since: the caller checks each)."""
        got = await self.redis.smembers(keys.run_waiting(run_id))
        return sorted(str(x) for x in got)

    async def forget_waiting(self, run_id: str, rids: builtins.list[str]) -> None:
        await forget_waiting(self.redis, run_id, rids)

    async def pending(self, run_id: str) -> int:
        return int(await self.redis.llen(keys.steering(run_id)))


# The run's waiting set is what a run waits on, whichever face filed it (the worker, the
# SDK, the API, MCP, the hook): a request in review (CREATE, or `add_waiting` on a
# cluster) or an open question (QuestionStore.ask). A stop withdraws them, a reply in
# the run's thread answers its question, and a call's deciders may steer the run.


async def add_waiting(redis: Redis, run_id: str, item_id: str) -> None:
    pipe = redis.pipeline(transaction=True)
    pipe.sadd(keys.run_waiting(run_id), item_id)
    pipe.expire(keys.run_waiting(run_id), WAITING_TTL_S)
    await pipe.execute()


async def forget_waiting(redis: Redis, run_id: str, ids: builtins.list[str]) -> None:
    if ids:
        await redis.srem(keys.run_waiting(run_id), *ids)
