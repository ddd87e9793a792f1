"""Questions an agent asks a person: one answer each, first answer wins."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import cast

from redis.asyncio import Redis

from bot import messages as msg
from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.ids import new_question_id
from bot.core.models import SYSTEM, Question, QuestionState
from bot.db.replicas import acks_for
from bot.db.scan import hashes
from bot.errors import AlreadyResolved, Expired, NotAnOption, NotFound
from bot.store import keys
from bot.store.codec import reply
from bot.store.replies import Reply
from bot.store.run.steering import add_waiting
from bot.store.scripts import QUESTION
from bot.store.scripts.common import QUESTION_TTL_S
from bot.store.stream.events import MAXLEN, publish
from bot.store.waiting import wait_until

log = logging.getLogger(__name__)


def _from_hash(h: dict[str, str]) -> Question:
    return Question.model_validate(
        {k: (v if v != "" else None) for k, v in h.items()}
        | {"question": h["question"], "state": h["state"], "owner": h.get("owner", "")}
        | {"options": json.loads(h.get("options") or "[]")}
    )


def _to_hash(q: Question) -> dict[str, str]:
    fields = {k: "" if v is None else str(v) for k, v in q.model_dump(mode="json").items()}
    # JSON, so the QUESTION script can hold an answer to the options in the same step
    return fields | {"options": json.dumps(list(q.options)) if q.options else ""}


def _log(q: Question, event: str, was: str | None, actor: str | None) -> None:
    extra = {"question_id": q.id, "event": event, "from_state": was, "to_state": q.state.value}
    log.info("question", extra=extra | {"actor": actor, "run_id": q.run_id})


class QuestionStore:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms, ids: IdFactory = new_id) -> None:
        self.redis = redis
        self.clock = clock
        self.ids = ids
        self._script = redis.register_script(QUESTION)
        self._acks = acks_for(redis)  # HITL_REPLICA_ACKS, as connect() found it

    async def ask(
        self,
        question: str,
        *,
        timeout_ms: int,
        run_id: str | None = None,
        channel: str | None = None,
        owner: str = "",
        options: Sequence[str] = (),
    ) -> Question:
        """`options`: checked by the caller (bot.core.choices); an answer must be one."""
        now = self.clock()
        q = Question(
            id=new_question_id(self.ids),
            run_id=run_id,
            question=question,
            channel=channel,
            owner=owner,
            options=tuple(options),
            asked_at=now,
            expires_at=now + timeout_ms,
        )
        fields = _to_hash(q)
        # Open, it must outlive its deadline for the sweeper; the script shortens it once
        # the question is final. The run's index outlives every record it names.
        ttl_s = QUESTION_TTL_S + -(-timeout_ms // 1000)
        if run_id:
            # Before the record (another slot on a cluster, so a step of its own): a crash
            # in between leaves an entry naming no record, which readers skip, never a
            # question its run cannot reach.
            await _index(self.redis, run_id, q.id, now, ttl_s)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.question(q.id), mapping=fields)  # type: ignore[arg-type]
        pipe.expire(keys.question(q.id), ttl_s)
        shard = keys.shard_of(q.id)
        pipe.zadd(
            keys.due(shard), {keys.due_member(keys.DUE_QUESTION, q.id, q.version): q.expires_at}
        )
        if not run_id:  # a run's questions leave with it (bot/store/retire.py)
            pipe.zadd(keys.loose_questions(shard), {q.id: now})
        pipe.xadd(
            keys.events(shard),
            {
                "kind": "question",
                "id": q.id,
                "version": q.version,
                "event": "ask",
                "run": q.run_id or "",
                "state": q.state.value,
            },
            maxlen=MAXLEN,
            approximate=True,
        )
        await pipe.execute()
        if run_id:
            # What the run waits on, for every face that asks under a run (its keys are
            # in another slot than the question's, so a step of its own).
            await add_waiting(self.redis, run_id, q.id)
        _log(q, "ask", None, owner or None)
        return q

    def with_ids(self, ids: IdFactory) -> QuestionStore:
        """The same store, minting question ids with `ids` (an agent derives its own)."""
        return QuestionStore(self.redis, clock=self.clock, ids=ids)

    async def delivered(self, qid: str) -> None:
        """Announce that the asker read the answer (Slack ticks the reply off)."""
        fields = {"kind": "question", "id": qid, "event": "delivered", "state": "answered"}
        await publish(self.redis, qid, {**fields, "version": 0})

    async def of_run(self, run_id: str, *, batch: int = 500) -> list[Question]:
        """A run's questions, oldest first, read through the run's index (no SCAN): an
        entry whose record is not written yet, or has expired, is left out."""
        qids = cast(list[str], await self.redis.zrange(keys.run_questions(run_id), 0, -1))
        found = await hashes(self.redis, [keys.question(qid) for qid in qids], batch=batch)
        mine = [_from_hash(h) for h in found if h.get("run_id") == run_id]
        return sorted(mine, key=lambda q: (q.asked_at, q.id))

    async def get(self, qid: str) -> Question:
        h = cast(dict[str, str], await self.redis.hgetall(keys.question(qid)))
        if not h:
            raise NotFound(msg.UNKNOWN_QUESTION.format(id=qid))
        return _from_hash(h)

    async def _fire(
        self, qid: str, event: str, actor: str = "", answer: str = "", fence: int | None = None
    ) -> tuple[str, Question]:
        # An answer is acknowledged only once the replicas asked for hold it: the agent
        # acts on it, and the person was told it was taken. The sweeper's expiry waits
        # for nobody: an unconfirmed one is logged, and the sweeper expires it again.
        status, out = await self._acks.script(
            self._script,
            keys=keys.question_keys(qid),
            args=[self.clock(), event, actor, answer, "" if fence is None else fence],
            strict=event != "timeout",
        )
        if status == Reply.NOT_FOUND:
            raise NotFound(msg.UNKNOWN_QUESTION.format(id=qid))
        q = _from_hash(reply(out))
        if status == Reply.OK:  # the sweeper's expiries too, as a request's timeouts are
            who = actor or (SYSTEM if event == "timeout" else None)  # a cancel names nobody
            _log(q, event, QuestionState.OPEN.value, who)
        if q.run_id and q.state != QuestionState.OPEN:
            # Left open: no longer waited on, and the run's index is kept as long as the
            # record now is (the script set its TTL). The run's slot: a step of its own.
            pipe = self.redis.pipeline(transaction=True)
            pipe.srem(keys.run_waiting(q.run_id), q.id)
            pipe.expire(keys.run_questions(q.run_id), QUESTION_TTL_S, gt=True)
            await pipe.execute()
        return str(status), q

    async def answer(self, qid: str, *, actor: str, answer: str) -> Question:
        """Record the first answer; the same person resending it gets it back unchanged."""
        status, q = await self._fire(qid, "answer", actor, answer)
        if status == Reply.ALREADY_RESOLVED:
            by = q.answered_by or "system"
            at = q.answered_at or q.expires_at
            raise AlreadyResolved(
                msg.ALREADY_RESOLVED.format(how=q.state.value, by=by, at=msg.when(at)),
                state=q.state.value,
                by=by,
                at=at,
                how=q.state.value,
            )
        if status == Reply.EXPIRED:
            raise Expired(msg.QUESTION_CLOSED.format(state="expired"), state=q.state.value)
        if status == Reply.NOT_AN_OPTION:
            raise NotAnOption(msg.NOT_AN_OPTION.format(options=" | ".join(q.options)))
        return q

    async def timeout(self, qid: str, fence: int | None = None) -> bool:
        status, _ = await self._fire(qid, "timeout", fence=fence)
        return status == Reply.OK

    async def cancel(self, qid: str) -> Question:
        return (await self._fire(qid, "cancel"))[1]

    async def wait(self, qid: str, timeout_s: float) -> Question:
        return await wait_until(
            self.redis,
            (keys.question(qid), keys.wake(qid)),
            lambda: self.get(qid),
            lambda q: q.state != QuestionState.OPEN,
            timeout_s,
        )


async def _index(redis: Redis, run_id: str, qid: str, asked_at: int, ttl_s: int) -> None:
    """Add a question to its run's index, which lives at least `ttl_s` from now."""
    key = keys.run_questions(run_id)
    pipe = redis.pipeline(transaction=True)
    pipe.zadd(key, {qid: asked_at})
    pipe.expire(key, ttl_s, nx=True)  # a new index: no TTL yet, which GT cannot extend
    pipe.expire(key, ttl_s, gt=True)  # never shortened by a question with less time
    await pipe.execute()
