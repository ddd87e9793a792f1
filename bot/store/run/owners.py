"""Who a run id belongs to: whoever used it first; and whose a request or question is.

A run started with `POST /v1/runs` (or from Slack) is its starter's from birth
(`RunStore.start`). An outside agent's run id is only a name it picks, so the
first identity to file an approval or a question under it, or to read its
corrections, takes it; one script sets and reads the owner in one step, so two
identities racing for a new id cannot both win.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.clock import Clock, wall_ms
from bot.core.models import RunState
from bot.store import keys
from bot.store.run import run_index

OWNER_TTL_S = 30 * 86_400  # as long as a run's record is kept (bot/store/run/runs.py)

# KEYS: the run's record, its owner key.  ARGV: the identity using it, ttl seconds, the
# run id, now, a title ('' for none). Reply: [the run's owner ('' for a run whose record
# names none), 1 if this call wrote the run's record else 0]. An id nobody used gets a
# run record too (`outside`, running, the identity as its agent and requester, the title
# as its prompt): a run like a worker's, listed, shown, steered and stopped by the same
# paths. The owner may name a run that has no title yet (its first use was a read of its
# corrections); a title is never replaced.
CLAIM = f"""
local R, O = KEYS[1], KEYS[2]
local who, ttl, id, now, title = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local had = redis.call('GET', O)
if had then
  if had == who then
    redis.call('EXPIRE', O, ttl); redis.call('EXPIRE', R, ttl)
    if title ~= '' and redis.call('HGET', R, 'outside') == '1'
        and (redis.call('HGET', R, 'prompt') or '') == '' then
      redis.call('HSET', R, 'prompt', title)
    end
  end
  return {{had, 0}}
end
if redis.call('EXISTS', R) == 1 then return {{redis.call('HGET', R, 'owner') or '', 0}} end
redis.call('SET', O, who, 'EX', ttl)
redis.call('HSET', R, 'id', id, 'agent', who, 'prompt', title, 'requester', who, 'owner', who,
           'state', '{RunState.RUNNING.value}', 'created_at', now, 'updated_at', now,
           'outside', '1')
redis.call('EXPIRE', R, ttl)
return {{who, 1}}
"""


class RunOwners:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms) -> None:
        self.redis = redis
        self.clock = clock
        self._claim = redis.register_script(CLAIM)

    async def claim(self, run_id: str, identity: str, *, title: str | None = None) -> str:
        """The run's owner, which is `identity` if nobody used the id before. `title`
        names the run if it is `identity`'s and has no name yet."""
        now = self.clock()
        owner, wrote = cast(
            list[str | bytes | int],
            await self._claim(
                keys=[keys.run(run_id), keys.run_owner(run_id)],
                args=[identity, OWNER_TTL_S, run_id, now, title or ""],
            ),
        )
        if wrote:  # a new outside run: listed like a worker's, once its record is there
            await run_index.entered(self.redis, run_id, now, identity)
        return owner.decode() if isinstance(owner, bytes) else str(owner)

    async def owner(self, run_id: str) -> str | None:
        """The run's owner without taking it: None for an id nobody used."""
        got = await self.redis.get(keys.run_owner(run_id))
        if got is not None:
            return got.decode() if isinstance(got, bytes) else str(got)
        owner = await self.redis.hget(keys.run(run_id), "owner")
        if owner is None:
            return "" if await self.redis.exists(keys.run(run_id)) else None
        return owner.decode() if isinstance(owner, bytes) else str(owner)

    async def request_owner(self, rid: str) -> tuple[str | None, str | None]:
        """A request's (owner, requester) fields alone, without loading the request; both
        None for an unknown id. A missing owner is the requester (bot/store/codec.py)."""
        got = cast(
            list[str | None], await self.redis.hmget(keys.request(rid), ["owner", "requester"])
        )
        return got[0], got[1]

    async def question_owner(self, qid: str) -> str | None:
        owner = await self.redis.hget(keys.question(qid), "owner")
        return None if owner is None else str(owner)
