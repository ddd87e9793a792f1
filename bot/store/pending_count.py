"""How many requests wait for a person, by risk tier, without reading the requests.

The scripts keep a per-shard hash of counts (`keys.pending_tiers`) as requests enter
and leave review, one field per tier and requester (`TIER:IDENTITY`): one command per
move keeps both figures below (a field per tier and one per requester took two, 0.15
of a transition's floor: docs/performance.md). A /metrics scrape reads the 16 hashes,
whose size is the number of people and agents waiting, whatever the backlog; reading
every pending request's tier took a million HGETs per scrape at scale.
A count is trusted only while it is known whole: the hash carries a marker set by a
full count, and its sum must equal the shard's `pending` index, read in the same
step. Otherwise (a fresh store, or counts lost or edited by hand) the shard is counted
again, once, inside one script, so no create or decision lands halfway.

The same fields count each requester's waiting calls, so the API can bound them
(bot/api/waiting.py) with 16 small reads (one field per tier), whatever the backlog.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.core.policy import TIER_ORDER
from bot.errors import StoreUnavailable
from bot.store import keys

# The marker field: written by a full count, never by an increment. Renamed whenever
# the fields kept change (now `TIER:IDENTITY`), so a store counted before is counted again.
WHOLE = "_whole3"

RETRIES = 5  # the index moved between reading its ids and the count: read them again

# KEYS: pending index, counts hash, then the hash of each request listed (the shard's
# own: one hash tag, so a cluster serves this too).  ARGV: the marker, then the ids in
# the order of their keys. The ids must be the whole index still, else the reply is
# false and nothing is written.
RECOUNT = """
local PENDING, COUNTS = KEYS[1], KEYS[2]
local marker = ARGV[1]
local n = #ARGV - 1
if redis.call('ZCARD', PENDING) ~= n then return false end
local counts = {}
for i = 1, n do
  if not redis.call('ZSCORE', PENDING, ARGV[i + 1]) then return false end
  local got = redis.call('HMGET', KEYS[i + 2], 'risk', 'requester')
  if got[1] and got[2] then
    local field = got[1] .. ':' .. got[2]
    counts[field] = (counts[field] or 0) + 1
  end
end
redis.call('DEL', COUNTS)
local out = {marker, '1'}
for field, c in pairs(counts) do out[#out + 1] = field; out[#out + 1] = tostring(c) end
redis.call('HSET', COUNTS, unpack(out))
return out
"""
# KEYS: the counts hash, the pending index. The counts and the index's size, read in one
# step so they agree (a MULTI would do, but redis-py 6.2's cluster MULTI fails on
# HGETALL's reply callback).
COUNTS = """
return {redis.call('HGETALL', KEYS[1]), redis.call('ZCARD', KEYS[2])}
"""


def _field(tier: str, requester: str) -> str:
    return f"{tier}:{requester}"


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
    """The counts by tier, from the fields by tier and requester."""
    out: dict[str, int] = {}
    for k, v in raw.items():
        if k != WHOLE:
            tier = k.partition(":")[0]
            out[tier] = out.get(tier, 0) + int(v)
    return out


async def waiting_of(redis: Redis, requester: str) -> int:
    """How many of `requester`'s calls wait for a person: one read of each shard's
    counts in one pipeline; a shard never counted whole is counted first."""
    fields = [_field(t.value, requester) for t in TIER_ORDER]
    pipe = redis.pipeline(transaction=False)
    for shard in range(keys.SHARDS):
        pipe.hmget(keys.pending_tiers(shard), [WHOLE, *fields])
    got = cast(list[list[str | None]], await pipe.execute())
    total = 0
    for shard, (whole, *ns) in enumerate(got):
        if whole is None:
            counted = await _recount_all(redis, shard)
            ns = [counted.get(f) for f in fields]
        total += sum(max(int(n or 0), 0) for n in ns)
    return total


async def by_tier(redis: Redis) -> dict[str, int]:
    """Pending requests per tier, every tier listed (0 where none)."""
    total = dict.fromkeys((t.value for t in TIER_ORDER), 0)
    read = redis.register_script(COUNTS)
    for shard in range(keys.SHARDS):
        flat, size = cast(
            tuple[list[str], int], await read(keys=[keys.pending_tiers(shard), keys.pending(shard)])
        )
        raw = dict(zip(flat[::2], flat[1::2], strict=True))
        values = [int(v) for k, v in raw.items() if k != WHOLE]
        counts = _tiers(raw)
        if WHOLE not in raw or sum(values) != size or min(values, default=0) < 0:
            counts = await _recount(redis, shard)
        for tier, n in counts.items():
            total[tier] = total.get(tier, 0) + n
    return total
