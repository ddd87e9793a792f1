"""Agent runs: their state, transcript, home thread and the queue workers take them from."""

from __future__ import annotations

import builtins
import json
from typing import Any, cast

from redis.asyncio import Redis

from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.ids import new_run_id
from bot.core.models import RUN_FINAL, WORKER, Run
from bot.db.replicas import acks_for
from bot.errors import NotFound
from bot.store import keys
from bot.store.run import run_index
from bot.store.stream.events import publish

RUN_TTL_S = 30 * 86_400


def _fields(run: Run) -> dict[str, str]:
    return {
        k: "" if v is None else str(int(v) if isinstance(v, bool) else v)
        for k, v in run.model_dump(mode="json").items()
    }


def _from_hash(h: dict[str, str]) -> Run:
    data: dict[str, Any] = {k: (v if v != "" else None) for k, v in h.items()}
    data["stop_requested"] = h.get("stop_requested") == "1"
    data["outside"] = h.get("outside") == "1"
    data["prompt"] = h.get("prompt", "")
    data["owner"] = h.get("owner", "")
    return Run.model_validate(data)


class RunStore:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms, ids: IdFactory = new_id) -> None:
        self.redis = redis
        self.clock = clock
        self.ids = ids

    async def start(
        self,
        *,
        agent: str,
        prompt: str,
        requester: str,
        channel: str | None = None,
        thread_ts: str | None = None,
        owner: str = WORKER,
    ) -> Run:
        """Record the run and queue it for the workers. `owner`: the identity that started
        it (WORKER for a person in Slack); the run id is its own from here on."""
        now = self.clock()
        run = Run(
            id=new_run_id(self.ids),
            agent=agent,
            prompt=prompt,
            requester=requester,
            owner=owner,
            channel=channel,
            thread_ts=thread_ts,
            created_at=now,
            updated_at=now,
        )
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.run(run.id), mapping=_fields(run))  # type: ignore[arg-type]
        pipe.expire(keys.run(run.id), RUN_TTL_S)
        # the id is new, so nobody used it before: it is the owner's (bot/store/run/owners.py)
        pipe.set(keys.run_owner(run.id), owner, ex=RUN_TTL_S)
        await pipe.execute()
        await run_index.entered(self.redis, run.id, now, requester)
        if channel and thread_ts:
            await self.redis.set(keys.thread(channel, thread_ts), run.id, ex=RUN_TTL_S)
        await self.redis.xadd(keys.RUN_QUEUE, {"run_id": run.id})
        await publish(
            self.redis,
            run.id,
            {"kind": "run", "id": run.id, "event": "start", "state": run.state.value, "version": 0},
        )
        # Whoever started it is told it exists: the record and its queue entry both.
        await self.confirm_saved(run.id)
        await acks_for(self.redis).confirm(keys.RUN_QUEUE)
        return run

    async def calls_filed(self, request_id: str, question_id: str) -> bool:
        """Is a request or a question already filed under these ids (derived from a tool
        call id, which some model servers reuse from turn to turn)?"""
        pipe = self.redis.pipeline(transaction=False)
        pipe.exists(keys.request(request_id))
        pipe.exists(keys.question(question_id))
        return any(await pipe.execute())

    async def get(self, run_id: str) -> Run:
        h = cast(dict[str, str], await self.redis.hgetall(keys.run(run_id)))
        if not h:
            raise NotFound(f"No run with id {run_id}.")
        return _from_hash(h)

    async def update(self, run_id: str, **changes: Any) -> Run:
        """Change fields of a run; a change of state is announced on the event stream."""
        before = await self.get(run_id)
        after = before.model_copy(update={**changes, "updated_at": self.clock()})
        fields = _fields(after)
        # Only what changed: a whole-hash write would undo a concurrent stop flag.
        mine = {k: fields[k] for k in (*changes, "updated_at")}
        await self.redis.hset(keys.run(run_id), mapping=mine)  # type: ignore[arg-type]
        if (after.state in RUN_FINAL) != (before.state in RUN_FINAL):
            # After the record (its own step on a cluster): a crash in between leaves a
            # final run in a live index, which its readers prune.
            live = after.state not in RUN_FINAL
            await run_index.turned(self.redis, run_id, after.created_at, after.requester, live=live)
        if after.state != before.state:
            await publish(
                self.redis,
                run_id,
                {
                    "kind": "run",
                    "id": run_id,
                    "event": "state",
                    "state": after.state.value,
                    "version": 0,
                },
            )
        return after

    async def confirm_saved(self, run_id: str) -> None:
        """Raise NotReplicated unless the replicas asked for (HITL_REPLICA_ACKS) hold the
        run's record as written so far: a stop is acknowledged only once they do."""
        await acks_for(self.redis).confirm(keys.run(run_id))

    async def set_home(self, run_id: str, channel: str, thread_ts: str) -> None:
        await self.redis.hset(
            keys.run(run_id), mapping={"channel": channel, "thread_ts": thread_ts}
        )
        await self.redis.set(keys.thread(channel, thread_ts), run_id, ex=RUN_TTL_S)

    async def by_thread(self, channel: str, thread_ts: str) -> str | None:
        got = await self.redis.get(keys.thread(channel, thread_ts))
        return None if got is None else str(got)

    async def save_transcript(self, run_id: str, messages: list[dict[str, Any]]) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(keys.transcript(run_id))
        if messages:
            pipe.rpush(keys.transcript(run_id), *(json.dumps(m) for m in messages))
            pipe.expire(keys.transcript(run_id), RUN_TTL_S)
        await pipe.execute()

    async def transcript(self, run_id: str) -> list[dict[str, Any]]:
        raw = cast(list[str], await self.redis.lrange(keys.transcript(run_id), 0, -1))
        return [json.loads(x) for x in raw]

    async def list(self, limit: int = 50, *, live: bool = False) -> builtins.list[Run]:
        """The newest `limit` runs (`live`: only those not final), newest first, read
        through the run index: as quick with a million runs stored as with ten."""
        key = keys.RUNS_LIVE if live else keys.RUNS_ALL
        return [_from_hash(h) for h in await run_index.newest(self.redis, key, limit, live=live)]

    async def started_by(self, requester: str, limit: int) -> builtins.list[Run]:
        """The newest `limit` live runs `requester` started, newest first."""
        key = keys.runs_live_by(requester)
        return [_from_hash(h) for h in await run_index.newest(self.redis, key, limit, live=True)]

    async def counts(self) -> tuple[int, int]:
        """How many runs the store holds, and how many of them are live (the indexes'
        count: a run expired since its index was last tidied may still be in it)."""
        return await run_index.counts(self.redis)
