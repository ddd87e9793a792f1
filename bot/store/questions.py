"""Questions an agent asks a person: one answer each, first answer wins."""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot import messages as msg
from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.ids import new_question_id
from bot.core.models import Question, QuestionState
from bot.errors import AlreadyResolved, Expired, NotFound
from bot.store import keys
from bot.store.codec import reply
from bot.store.waiting import wait_until

WAKE_TTL_S = 86_400

# KEYS: question, due, wake, events.  ARGV: now, event (answer|timeout|cancel), actor, answer,
#       fence, wake ttl seconds
QUESTION = """
local Q, DUE, W = KEYS[1], KEYS[2], KEYS[3]
local now, ev, actor, answer = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', Q) == 0 then return {'not_found', '{}'} end
local raw = redis.call('HGETALL', Q)
local h = {}
for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
local function reply(code) return {code, cjson.encode(h)} end
if h.state ~= 'open' then
  if ev == 'answer' and h.answered_by == actor and h.answer == answer then
    return reply('repeat')
  end
  if ev == 'answer' then return reply('already_resolved') end
  return reply('noop')
end
local version = tonumber(h.version)
if ev == 'answer' then
  if now >= tonumber(h.expires_at) then return reply('expired') end
  h.state, h.answer, h.answered_by, h.answered_at = 'answered', answer, actor, tostring(now)
elseif ev == 'timeout' then
  if (ARGV[5] ~= '' and tonumber(ARGV[5]) ~= version) or now < tonumber(h.expires_at) then
    return reply('noop')
  end
  h.state = 'expired'
else
  h.state = 'cancelled'
end
redis.call('ZREM', DUE, 'q:' .. h.id .. '|' .. h.version)
h.version = tostring(version + 1)
redis.call('HSET', Q, 'state', h.state, 'version', h.version, 'answer', h.answer or '',
           'answered_by', h.answered_by or '', 'answered_at', h.answered_at or '')
redis.call('XADD', W, 'MAXLEN', '~', '16', h.version .. '-0', 'state', h.state)
redis.call('EXPIRE', W, tonumber(ARGV[6]))
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '100000', '*', 'kind', 'question', 'id', h.id,
           'version', h.version, 'event', ev, 'state', h.state, 'run', h.run_id or '')
return reply('ok')
"""


def _from_hash(h: dict[str, str]) -> Question:
    return Question.model_validate(
        {k: (v if v != "" else None) for k, v in h.items()}
        | {"question": h["question"], "state": h["state"], "owner": h.get("owner", "")}
    )


class QuestionStore:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms, ids: IdFactory = new_id) -> None:
        self.redis = redis
        self.clock = clock
        self.ids = ids
        self._script = redis.register_script(QUESTION)

    async def ask(
        self,
        question: str,
        *,
        timeout_ms: int,
        run_id: str | None = None,
        channel: str | None = None,
        owner: str = "",
    ) -> Question:
        now = self.clock()
        q = Question(
            id=new_question_id(self.ids),
            run_id=run_id,
            question=question,
            channel=channel,
            owner=owner,
            asked_at=now,
            expires_at=now + timeout_ms,
        )
        fields = {k: "" if v is None else str(v) for k, v in q.model_dump(mode="json").items()}
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.question(q.id), mapping=fields)  # type: ignore[arg-type]
        shard = keys.shard_of(q.id)
        pipe.zadd(keys.due(shard), {keys.due_member("q", q.id, q.version): q.expires_at})
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
            maxlen=100_000,
            approximate=True,
        )
        await pipe.execute()
        return q

    async def get(self, qid: str) -> Question:
        h = cast(dict[str, str], await self.redis.hgetall(keys.question(qid)))
        if not h:
            raise NotFound(msg.UNKNOWN_QUESTION.format(id=qid))
        return _from_hash(h)

    async def _fire(
        self, qid: str, event: str, actor: str = "", answer: str = "", fence: int | None = None
    ) -> tuple[str, Question]:
        status, out = await self._script(
            keys=keys.question_keys(qid),
            args=[self.clock(), event, actor, answer, "" if fence is None else fence, WAKE_TTL_S],
        )
        if status == "not_found":
            raise NotFound(msg.UNKNOWN_QUESTION.format(id=qid))
        return str(status), _from_hash(reply(out))

    async def answer(self, qid: str, *, actor: str, answer: str) -> Question:
        """Record the first answer; the same person resending it gets it back unchanged."""
        status, q = await self._fire(qid, "answer", actor, answer)
        if status == "already_resolved":
            by = q.answered_by or "system"
            at = q.answered_at or q.expires_at
            raise AlreadyResolved(
                msg.ALREADY_RESOLVED.format(how=q.state.value, by=by, at=msg.when(at)),
                state=q.state.value,
                by=by,
                at=at,
                how=q.state.value,
            )
        if status == "expired":
            raise Expired(msg.QUESTION_CLOSED.format(state="expired"), state=q.state.value)
        return q

    async def timeout(self, qid: str, fence: int | None = None) -> bool:
        status, _ = await self._fire(qid, "timeout", fence=fence)
        return status == "ok"

    async def cancel(self, qid: str) -> Question:
        return (await self._fire(qid, "cancel"))[1]

    async def wait(self, qid: str, timeout_s: float) -> Question:
        return await wait_until(
            self.redis,
            keys.wake(qid),
            lambda: self.get(qid),
            lambda q: q.state != QuestionState.OPEN,
            timeout_s,
        )
