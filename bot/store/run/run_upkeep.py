"""Operator maintenance over every run: a SCAN, never run by a hot path.

Runs started before the run indexes existed are in none of them, and a crash between a
run's record and its index entry leaves it out too: `index_every_run` puts every run
the store holds in the indexes it belongs to and prunes every entry that names no run
(or, in a live index, a final one), so the lists agree with the records again; and
`index_every_request` puts every request filed under a run in its run's index.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.core.models import RUN_FINAL
from bot.db.scan import key_names
from bot.store import keys
from bot.store.run.run_index import BY_TTL_S
from bot.store.run.run_requests import INDEX_TTL_S

_FINAL = frozenset(s.value for s in RUN_FINAL)
_FIELDS = ("id", "created_at", "state", "requester")


async def index_every_run(redis: Redis, *, batch: int = 500) -> int:
    """Index every run and prune what names none; how many runs were checked. Safe to
    run again, and alongside serve: it adds what is missing and drops only what is
    stale when it looks."""
    checked = 0
    names = await key_names(redis, keys.RUN_KEYS, batch=batch)
    runs = [keys.run(run_id) for name in names if (run_id := keys.run_id_of(name))]
    for i in range(0, len(runs), batch):
        pipe = redis.pipeline(transaction=False)
        for name in runs[i : i + batch]:
            pipe.hmget(name, list(_FIELDS))
        fix = redis.pipeline(transaction=False)
        for fields in cast(list[list[str | None]], await pipe.execute()):
            run_id, created_at, state, requester = fields
            if not run_id:
                continue  # gone since the SCAN, or fields written after it expired
            checked += 1
            at = {run_id: int(created_at or 0)}
            fix.zadd(keys.RUNS_ALL, at, nx=True)
            by = keys.runs_live_by(requester or "")
            if state in _FINAL:
                fix.zrem(keys.RUNS_LIVE, run_id)
                fix.zrem(by, run_id)
            else:
                fix.zadd(keys.RUNS_LIVE, at, nx=True)
                fix.zadd(by, at, nx=True)
                fix.expire(by, BY_TTL_S, nx=True)
        await fix.execute()
    for index in [keys.RUNS_ALL, keys.RUNS_LIVE, *await key_names(redis, keys.RUNS_LIVE_BY)]:
        await _prune(redis, index, live=index != keys.RUNS_ALL, batch=batch)
    return checked


async def _prune(redis: Redis, index: str, *, live: bool, batch: int) -> None:
    """Drop the entries of `index` that name no run (or, `live`, a final one)."""
    ids = [str(m) async for m, _ in redis.zscan_iter(index, count=batch)]
    for i in range(0, len(ids), batch):
        chunk = ids[i : i + batch]
        pipe = redis.pipeline(transaction=False)
        for run_id in chunk:
            pipe.hmget(keys.run(run_id), ["id", "state"])
        got = cast(list[list[str | None]], await pipe.execute())
        stale = [
            run_id
            for run_id, (found, state) in zip(chunk, got, strict=True)
            if found != run_id or (live and state in _FINAL)
        ]
        if stale:
            await redis.zrem(index, *stale)


async def index_every_request(redis: Redis, *, batch: int = 500) -> int:
    """Put every request filed under a run in its run's index (requests filed before the
    index existed); how many requests were checked. Safe to repeat."""
    checked = 0
    names = await key_names(redis, keys.REQUEST_RECORDS, batch=batch)
    for i in range(0, len(names), batch):
        pipe = redis.pipeline(transaction=False)
        for name in names[i : i + batch]:
            pipe.hmget(name, ["id", "run_id", "created_at"])
        fix = redis.pipeline(transaction=False)
        for rid, run_id, created_at in cast(list[list[str | None]], await pipe.execute()):
            if not rid:
                continue
            checked += 1
            if run_id:
                index = keys.run_requests(run_id)
                fix.zadd(index, {rid: int(created_at or 0)}, nx=True)
                fix.expire(index, INDEX_TTL_S, nx=True)
        await fix.execute()
    return checked
