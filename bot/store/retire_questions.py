"""Retention of the questions asked outside any run (bot/store/retire.py takes a run's
with the run): an MCP elicitation's answer, or an ask_human with no run, is a person's
word, so it goes to the archive before the record's own 30-day expiry would drop it.

Each shard indexes its loose questions by `asked_at` (`keys.loose_questions`, written
with the record). A pass reads the oldest, keeps the final ones that ended before the
cut as `{"kind": "question", "id", "fields"}` records, and after the segment is named
removes each only if its version is still the one archived (one script, one slot).
An entry whose record already expired leaves the index.
"""

from __future__ import annotations

from typing import Any, cast

from redis.asyncio import Redis

from bot.core.models import QuestionState
from bot.store import keys

BATCH = 500
PAGES = 20  # per shard, past open questions at the head of the index
_FINAL = frozenset(s.value for s in QuestionState if s is not QuestionState.OPEN)

# KEYS: question, its wake stream, the shard's loose index; ARGV: version, question id.
DROP = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1
"""


async def due(redis: Redis, cut: int) -> bool:
    pipe = redis.pipeline(transaction=False)
    for shard in range(keys.SHARDS):
        pipe.zcount(keys.loose_questions(shard), 0, cut)
    return any(int(n) for n in await pipe.execute())


async def collect(redis: Redis, cut: int, room: int) -> list[dict[str, Any]]:
    """Up to `room` final loose questions that ended before `cut`, oldest first per shard."""
    out: list[dict[str, Any]] = []
    for shard in range(keys.SHARDS):
        index, start = keys.loose_questions(shard), 0
        for _ in range(PAGES):
            if len(out) >= room:
                return out
            ids = cast(list[str], await redis.zrangebyscore(index, 0, cut, start, BATCH))
            if not ids:
                break
            start += len(ids)
            pipe = redis.pipeline(transaction=False)
            for qid in ids:
                pipe.hgetall(keys.question(qid))
            gone = []
            for qid, h in zip(ids, await pipe.execute(), strict=True):
                if not h:
                    gone.append(qid)  # expired by itself (asked before the index kept it)
                elif len(out) < room and h.get("state") in _FINAL and _ended(h) < cut:
                    out.append({"kind": "question", "id": qid, "fields": h})
            if gone:
                await redis.zrem(index, *gone)
                start -= len(gone)
    return out


async def drop(redis: Redis, rec: dict[str, Any]) -> int:
    """1 when the archived question left the store; 0 when it moved (kept for the next
    pass) or was already gone."""
    qid = str(rec["id"])
    k = [keys.question(qid), keys.wake(qid), keys.loose_questions(keys.shard_of(qid))]
    version = str(rec["fields"].get("version", ""))
    return int(await redis.eval(DROP, 3, *k, version, qid))


def _ended(h: dict[str, str]) -> int:
    """When a final question ended: its answer, else its deadline."""
    for name in ("answered_at", "expires_at"):
        try:
            return int(h.get(name) or "")
        except ValueError:
            continue
    return 0
