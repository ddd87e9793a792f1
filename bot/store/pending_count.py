"""How many requests wait for a person, by risk tier, without reading the requests.

The scripts keep a per-shard hash of counts (`keys.pending_tiers`) as requests enter
and leave review, so a /metrics scrape costs 16 small reads whatever the backlog;
reading every pending request's tier took a million HGETs per scrape at scale.
A count is trusted only while it is known whole: the hash carries a marker set by a
full count, and its sum must equal the shard's `pending` index, read in the same
MULTI. Otherwise (a fresh store, or counts lost or edited by hand) the shard is counted
again, once, inside one script, so no create or decision lands halfway.

The same hash counts each requester's waiting calls (fields `w:IDENTITY`), so the API
can bound them (bot/api/waiting.py) with 16 small reads, whatever the backlog.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.core.policy import TIER_ORDER
from bot.errors import StoreUnavailable
from bot.store import keys

# The marker field: written by a full count, never by an increment. Renamed when the
# counts kept gained the per-requester fields, so a store counted before is counted again.
WHOLE = "_whole2"
WAITING = "w:"  # field prefix: one requester's waiting calls

RETRIES = 5  # the index moved between reading its ids and the count: read them again

# KEYS: pending index, counts hash, then the hash of each request listed (the shard's
# own: one hash tag, so a cluster serves this too).  ARGV: the marker, then the ids in
# the order of their keys. The ids must be the whole index still, else the reply is
# false and nothing is written.
RECOUNT = """
local PENDING, COUNTS = KEYS[1], KEYS[2]
local marker = ARGV[1]
local ARGV_WAITING = 'w:'  -- pending_count.WAITING
local n = #ARGV - 1
if redis.call('ZCARD', PENDING) ~= n then return false end
local counts = {}
for i = 1, n do
  if not redis.call('ZSCORE', PENDING, ARGV[i + 1]) then return false end
  local got = redis.call('HMGET', KEYS[i + 2], 'risk', 'requester')
  if got[1] then counts[got[1]] = (counts[got[1]] or 0) + 1 end
  if got[2] then
    local w = ARGV_WAITING .. got[2]
    counts[w] = (counts[w] or 0) + 1
  end
end
redis.call('DEL', COUNTS)
local out = {marker, '1'}
for risk, c in pairs(counts) do out[#out + 1] = risk; out[#out + 1] = tostring(c) end
redis.call('HSET', COUNTS, unpack(out))
return out
"""


async def _recount(redis: Redis, shard: int) -> dict[str, int]:
    """The shard's tier counts, counted again (`_recount_all`)."""
    return _tiers(await _recount_all(redis, shard))


async def _recount_all(redis: Redis, shard: int) -> dict[str, str]:
    """The shard counted again: its pending ids read, then counted in one script that
    checks they are still the whole index (every key it reads passed in KEYS)."""
    recount = redis.register_script(RECOUNT)
    index = keys.pending(shard)
    for _ in range(RETRIES):
        ids = cast(list[str], await redis.zrange(index, 0, -1))
        flat = await recount(
            keys=[index, keys.pending_tiers(shard), *(keys.request(i) for i in ids)],
            args=[WHOLE, *ids],
        )
        if flat:
            pairs = [str(x) for x in cast(list[object], flat)]
            return dict(zip(pairs[::2], pairs[1::2], strict=True))
    raise StoreUnavailable(
        f"The pending requests of shard {shard} kept changing while they were counted: try again."
    )


def _tiers(raw: dict[str, str]) -> dict[str, int]:
    return {k: int(v) for k, v in raw.items() if k != WHOLE and not k.startswith(WAITING)}


async def waiting_of(redis: Redis, requester: str) -> int:
    """How many of `requester`'s calls wait for a person: one read of each shard's
    counts in one pipeline; a shard never counted whole is counted first."""
    field = WAITING + requester
    pipe = redis.pipeline(transaction=False)
    for shard in range(keys.SHARDS):
        pipe.hmget(keys.pending_tiers(shard), [WHOLE, field])
    got = cast(list[list[str | None]], await pipe.execute())
    total = 0
    for shard, (whole, n) in enumerate(got):
        if whole is None:
            n = (await _recount_all(redis, shard)).get(field)
        total += max(int(n or 0), 0)
    return total


async def by_tier(redis: Redis) -> dict[str, int]:
    """Pending requests per tier, every tier listed (0 where none)."""
    names = [t.value for t in TIER_ORDER]
    total = dict.fromkeys(names, 0)
    for shard in range(keys.SHARDS):
        pipe = redis.pipeline(transaction=True)  # one slot: the counts and the index agree
        # HMGET, not HGETALL: redis-py 6.2's cluster MULTI fails on HGETALL's reply callback
        pipe.hmget(keys.pending_tiers(shard), [WHOLE, *names])
        pipe.zcard(keys.pending(shard))
        got, size = cast(tuple[list[str | None], int], tuple(await pipe.execute()))
        counts = {n: int(v) for n, v in zip(names, got[1:], strict=True) if v is not None}
        if got[0] is None or sum(counts.values()) != size or min(counts.values(), default=0) < 0:
            counts = await _recount(redis, shard)
        for tier, n in counts.items():
            total[tier] = total.get(tier, 0) + n
    return total
