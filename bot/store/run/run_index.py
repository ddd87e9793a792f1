"""The run indexes: how runs are listed without a SCAN over every run ever stored.

Three kinds of sorted set of run ids, each scored by the run's `created_at`
(bot/store/keys.py): every run (`RUNS_ALL`), the runs not final yet (`RUNS_LIVE`), and
each starter's live runs (`runs_live_by`). A run enters them once its record is written
(`RunStore.start`; `RunOwners.claim` for an outside agent's run), leaves the live ones
as it turns final (`RunStore.update`), and an entry whose record has expired is pruned
where a reader or a writer meets it.

The indexes share one hash tag, so one MULTI keeps them together on a cluster; a run's
record has a tag of its own, so the index is written in a step of its own after the
record. A crash in between leaves a run out of the lists (`hitl-bot maintenance
index-runs` puts it back), never an entry that names no record and is believed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from redis.asyncio import Redis

from bot.core.models import RUN_FINAL
from bot.store import keys

# Each start looks at a few entries of the indexes it writes and prunes those whose
# record has gone: the oldest (runs mostly expire oldest first) and a few at random (an
# outside agent's run, kept alive by use, may sit at the tail for ever). The indexes stay
# about as long as the runs they name, at a constant cost per start.
TIDY_OLDEST = 2
TIDY_SAMPLE = 2
# A person's live index lives this long after the last run they started (as a run does).
BY_TTL_S = 30 * 86_400
_FINAL = frozenset(s.value for s in RUN_FINAL)

Hash = dict[str, str]


def _live_keys(requester: str) -> list[str]:
    return [keys.RUNS_LIVE, keys.runs_live_by(requester)]


def _is_live(h: Hash) -> bool:
    return h.get("state", "") not in _FINAL


def _always(h: Hash) -> bool:
    return True


async def entered(redis: Redis, run_id: str, created_at: int, requester: str) -> None:
    """A run whose record was just written: listed among every run and the live ones."""
    by = keys.runs_live_by(requester)
    pipe = redis.pipeline(transaction=True)
    pipe.zadd(keys.RUNS_ALL, {run_id: created_at})
    for key in _live_keys(requester):
        pipe.zadd(key, {run_id: created_at})
    pipe.expire(by, BY_TTL_S)
    await pipe.execute()
    await tidy(redis, requester)


async def turned(redis: Redis, run_id: str, created_at: int, requester: str, *, live: bool) -> None:
    """A run's state changed between live and final: it joins or leaves the live lists."""
    pipe = redis.pipeline(transaction=True)
    for key in _live_keys(requester):
        if live:
            pipe.zadd(key, {run_id: created_at})
        else:
            pipe.zrem(key, run_id)
    await pipe.execute()


async def left(redis: Redis, run_id: str, requester: str) -> None:
    """A run retention removed (bot/store/retire.py), or one found expired: out of every
    index (`requester` "": its own live index is pruned where it is next read)."""
    pipe = redis.pipeline(transaction=True)
    pipe.zrem(keys.RUNS_ALL, run_id)
    pipe.zrem(keys.RUNS_LIVE, run_id)
    if requester:
        pipe.zrem(keys.runs_live_by(requester), run_id)
    await pipe.execute()


async def _fields(redis: Redis, run_ids: list[str]) -> list[Hash]:
    """Each run's record (empty for one gone), one round trip."""
    pipe = redis.pipeline(transaction=False)
    for run_id in run_ids:
        pipe.hgetall(keys.run(run_id))
    return cast(list[Hash], await pipe.execute())


async def _prune(redis: Redis, key: str, stale: list[str]) -> None:
    if stale:
        await redis.zrem(key, *stale)


def _stale(run_id: str, h: Hash, keep: Callable[[Hash], bool]) -> bool:
    # no id: the record expired (fields a late HSET wrote are no run)
    return h.get("id") != run_id or not keep(h)


async def tidy(redis: Redis, requester: str | None = None) -> None:
    """Prune a few entries of the indexes whose record has gone (or, in a live index,
    turned final): the oldest and a few at random."""
    looked: list[tuple[str, Callable[[Hash], bool]]] = [
        (keys.RUNS_ALL, _always),
        (keys.RUNS_LIVE, _is_live),
    ]
    if requester is not None:
        looked.append((keys.runs_live_by(requester), _is_live))
    pipe = redis.pipeline(transaction=False)
    for key, _ in looked:
        pipe.zrange(key, 0, TIDY_OLDEST - 1)
        pipe.zrandmember(key, TIDY_SAMPLE)
    got = cast(list[list[str] | None], await pipe.execute())
    picked = [
        list(dict.fromkeys([*(got[2 * i] or []), *(got[2 * i + 1] or [])]))
        for i in range(len(looked))
    ]
    every = list(dict.fromkeys(run_id for ids in picked for run_id in ids))
    if not every:
        return
    records = dict(zip(every, await _fields(redis, every), strict=True))
    for (key, keep), ids in zip(looked, picked, strict=True):
        await _prune(redis, key, [i for i in ids if _stale(i, records[i], keep)])


async def newest(redis: Redis, key: str, limit: int, *, live: bool) -> list[Hash]:
    """The records of the newest `limit` runs in the index `key`, newest first; entries
    whose record has gone (or, `live`, turned final) are pruned as they are met. Reads
    about `limit` entries, however many runs the store holds."""
    keep = _is_live if live else _always
    out: list[Hash] = []
    seen: set[str] = set()
    start = 0
    while len(out) < limit:
        want = limit - len(out)
        ids = cast(list[str], await redis.zrevrange(key, start, start + want - 1))
        if not ids:
            break
        stale: list[str] = []
        for run_id, h in zip(ids, await _fields(redis, ids), strict=True):
            if _stale(run_id, h, keep):
                stale.append(run_id)
            elif run_id not in seen:  # a run added meanwhile shifts the ranks: met twice
                seen.add(run_id)
                out.append(h)
        await _prune(redis, key, stale)
        start += len(ids) - len(stale)
        if len(ids) < want:
            break
    return out


async def counts(redis: Redis) -> tuple[int, int]:
    """How many runs the store holds, and how many are live, as the indexes count them
    (a few entries tidied first; an expired run not met yet still counts)."""
    await tidy(redis)
    pipe = redis.pipeline(transaction=False)
    pipe.zcard(keys.RUNS_ALL)
    pipe.zcard(keys.RUNS_LIVE)
    n_all, n_live = await pipe.execute()
    return int(n_all), int(n_live)
