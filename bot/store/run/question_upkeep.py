"""Operator maintenance over every question: a SCAN, never run by a hot path.

Questions asked before the run index and the question TTL existed have neither:
`index_every_question` puts each in its run's index and gives it the TTL it would have
been given (bot/store/run/questions.py), so `show RUN` finds it and it leaves on schedule.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.core.models import QuestionState
from bot.db.scan import key_names
from bot.store import keys
from bot.store.scripts.common import QUESTION_TTL_S


async def index_every_question(redis: Redis, *, now_ms: int, batch: int = 500) -> int:
    """Index and give a TTL to every question that lacks them; how many were checked.
    Safe to run again, and alongside serve: it only adds what is missing."""
    checked = 0
    names = await key_names(redis, keys.QUESTION_KEYS, batch=batch)
    for i in range(0, len(names), batch):
        chunk = names[i : i + batch]
        pipe = redis.pipeline(transaction=False)
        for name in chunk:
            pipe.hmget(name, "id", "run_id", "state", "asked_at", "expires_at")
            pipe.ttl(name)
        got = await pipe.execute()
        fix = redis.pipeline(transaction=False)
        for name, fields, ttl in zip(chunk, got[::2], got[1::2], strict=True):
            qid, run_id, state, asked_at, expires_at = cast(list[str | None], fields)
            if qid is None:
                continue  # gone since the SCAN
            checked += 1
            if run_id:
                index = keys.run_questions(run_id)
                fix.zadd(index, {qid: int(asked_at or 0)}, nx=True)
                fix.expire(index, QUESTION_TTL_S, nx=True)
            else:  # retention finds a question outside any run by its shard's index
                fix.zadd(
                    keys.loose_questions(keys.shard_of(qid)), {qid: int(asked_at or 0)}, nx=True
                )
            if ttl == -1:  # no TTL: asked before questions had one
                left_s = max(0, (int(expires_at or 0) - now_ms) // 1000)
                open_ = state == QuestionState.OPEN.value
                fix.expire(name, QUESTION_TTL_S + (left_s if open_ else 0))
        await fix.execute()
    return checked
