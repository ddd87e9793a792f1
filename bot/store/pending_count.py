"""How many requests wait for a person, by risk tier, without reading the requests.

The scripts keep a per-shard hash of counts (`keys.pending_tiers`) as requests enter
and leave review, so a /metrics scrape costs 16 small reads whatever the backlog;
reading every pending request's tier took a million HGETs per scrape at scale.
A count is trusted only while it is known whole: the hash carries a marker set by a
full count, and its sum must equal the shard's `pending` index, read in the same
MULTI. Otherwise (a store written by an earlier release, which kept no counts, or
one a script of an older process left behind in a rolling upgrade) the shard is
counted again, once, inside one script, so no create or decision lands halfway.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.core.policy import TIER_ORDER
from bot.store import keys

WHOLE = "_whole"  # the marker field: written by a full count, never by an increment

# KEYS: pending index, counts hash.  ARGV: the shard's request key prefix, the marker.
# The request hashes are the shard's own (one hash tag), so a cluster serves this too.
RECOUNT = """
local counts = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local risk = redis.call('HGET', ARGV[1] .. id, 'risk')
  if risk then counts[risk] = (counts[risk] or 0) + 1 end
end
redis.call('DEL', KEYS[2])
local out = {ARGV[2], '1'}
for risk, n in pairs(counts) do out[#out + 1] = risk; out[#out + 1] = tostring(n) end
redis.call('HSET', KEYS[2], unpack(out))
return out
"""


def _tiers(raw: dict[str, str]) -> dict[str, int]:
    return {k: int(v) for k, v in raw.items() if k != WHOLE}


async def by_tier(redis: Redis) -> dict[str, int]:
    """Pending requests per tier, every tier listed (0 where none)."""
    names = [t.value for t in TIER_ORDER]
    total = dict.fromkeys(names, 0)
    recount = redis.register_script(RECOUNT)
    for shard in range(keys.SHARDS):
        pipe = redis.pipeline(transaction=True)  # one slot: the counts and the index agree
        # HMGET, not HGETALL: redis-py 6.2's cluster MULTI fails on HGETALL's reply callback
        pipe.hmget(keys.pending_tiers(shard), [WHOLE, *names])
        pipe.zcard(keys.pending(shard))
        got, size = cast(tuple[list[str | None], int], tuple(await pipe.execute()))
        counts = {n: int(v) for n, v in zip(names, got[1:], strict=True) if v is not None}
        if got[0] is None or sum(counts.values()) != size or min(counts.values(), default=0) < 0:
            flat = await recount(
                keys=[keys.pending(shard), keys.pending_tiers(shard)],
                args=[keys.request_prefix(shard), WHOLE],
            )
            pairs = [str(x) for x in cast(list[object], flat)]
            counts = _tiers(dict(zip(pairs[::2], pairs[1::2], strict=True)))
        for tier, n in counts.items():
            total[tier] = total.get(tier, 0) + n
    return total
