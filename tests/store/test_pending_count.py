"""The pending gauge by tier: right after every kind of move, costing no read per request,
and right again on a store whose counts are missing or wrong."""

from __future__ import annotations

from typing import Any, cast

from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.store import keys, pending_count
from bot.store.requests import RequestStore
from tests.support.clients import CLUSTER


async def truth(store: RequestStore) -> dict[str, int]:
    """Counted the slow way: every pending request read."""
    counts = {t: 0 for t in ("low", "medium", "high", "critical")}
    for req in await store.list_pending(limit=10_000):
        counts[req.risk.value] += 1
    return counts


async def hgets(redis: Redis) -> int:
    """HGETs the server ran so far, from inside scripts too (one server only: a cluster
    client's INFO answers per node)."""
    stats = cast(dict[str, Any], await redis.info("commandstats"))
    return int(stats.get("cmdstat_hget", {}).get("calls", 0))


async def some(store: RequestStore, policy: Policy) -> list[ActionRequest]:
    made = []
    for tool, amount in [("refund", 5), ("refund", 50), ("refund", 5000), ("deploy", 0)] * 3:
        args = {"amount": amount, "n": len(made)}
        made.append((await store.create(policy, tool=tool, args=args, requester="U1")).request)
    await store.create(policy, tool="move_claw", args={}, requester="U1")  # never pending
    return made


async def test_counts_follow_every_move_in_and_out_of_review(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock
) -> None:
    made = await some(store, policy)
    assert (
        await pending_count.by_tier(redis)
        == await truth(store)
        == {
            "low": 0,
            "medium": 6,
            "high": 3,
            "critical": 3,
        }
    )
    approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made[0].payload_hash)
    await store.transition(made[0].id, approve)
    reject = Decision(
        event=Event.REJECT, actor="UBOSS", payload_hash=made[2].payload_hash, reason_code="other"
    )
    await store.transition(made[2].id, reject)
    await store.transition(made[3].id, Decision(event=Event.CANCEL, reason_code="run_stopped"))
    first = Decision(event=Event.APPROVE, actor="UA", payload_hash=made[7].payload_hash)
    assert (await store.transition(made[7].id, first)).request.state == State.PENDING_REVIEW
    assert await pending_count.by_tier(redis) == await truth(store)

    # timeouts: an escalation stays in review, the last level's default leaves it
    for _ in range(3):
        clock.advance(30 * 60_000)
        for req in await store.list_pending(limit=100):
            await store.transition(req.id, Decision(event=Event.TIMEOUT))
        assert await pending_count.by_tier(redis) == await truth(store)
        # one requester's waiting calls, summed over the tiers they wait in
        assert await pending_count.waiting_of(redis, "U1") == sum((await truth(store)).values())
    assert await truth(store) == {"low": 0, "medium": 0, "high": 0, "critical": 0}


async def test_a_scrape_reads_no_request_once_counts_are_whole(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    await pending_count.by_tier(redis)  # an empty store: counted once, whole from now on
    made = await some(store, policy)
    approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made[2].payload_hash)
    await store.transition(made[2].id, approve)
    before = 0 if CLUSTER else await hgets(redis)  # INFO answers per node on a cluster
    assert await pending_count.by_tier(redis) == {
        "low": 0,
        "medium": 6,
        "high": 2,
        "critical": 3,
    }
    if not CLUSTER:
        assert await hgets(redis) == before


async def test_a_store_without_counts_or_with_wrong_ones_is_counted_again(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """Counts lost (a fresh store has none), or wrong: requests in and out of review
    the counts never heard of (a hand edit, a partial restore)."""
    await some(store, policy)
    for shard in range(keys.SHARDS):
        await redis.delete(keys.pending_tiers(shard))
    assert await pending_count.by_tier(redis) == await truth(store)

    one = (await store.list_pending(limit=1))[0]
    counts = keys.pending_tiers(keys.shard_of(one.id))
    field = f"{one.risk.value}:{one.requester}"  # a tier's count, one requester's share
    await redis.hincrby(counts, field, -1)  # type: ignore[misc]  # entered unseen
    assert await pending_count.by_tier(redis) == await truth(store)
    await redis.hincrby(counts, "critical:U1", 3)  # type: ignore[misc]  # left unseen
    assert await pending_count.by_tier(redis) == await truth(store)


async def test_a_recount_over_ids_the_index_no_longer_holds_writes_nothing(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """The recount reads only the request keys it is given: given a list the index has
    moved past (a request created or decided in between), it counts nothing."""
    made = await some(store, policy)
    shard = keys.shard_of(made[0].id)
    index, counts = keys.pending(shard), keys.pending_tiers(shard)
    ids = cast(list[str], await redis.zrange(index, 0, -1))
    recount = redis.register_script(pending_count.RECOUNT)
    before = await redis.hgetall(counts)  # type: ignore[misc]
    gone = next(f"x{i}" for i in range(1000) if keys.shard_of(f"x{i}") == shard)  # one slot
    stale = [*ids[1:], gone]
    got = await recount(
        keys=[index, counts, *(keys.request(i) for i in stale)], args=[pending_count.WHOLE, *stale]
    )
    assert got is None and await redis.hgetall(counts) == before  # type: ignore[misc]
    assert await pending_count.by_tier(redis) == await truth(store)
