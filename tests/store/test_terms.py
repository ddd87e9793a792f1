"""A request's review terms (chain, approvers, quorum, timeouts, default) are stored once
per shard and referenced: what a request holds while it waits is smaller, and who may
approve it is still fixed when it is created and never guessed when its terms are gone."""

from __future__ import annotations

import itertools
import json
from typing import cast

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy, parse_policy
from bot.core.states import Event, State
from bot.errors import NotEligible, StoreDamaged
from bot.store import keys
from bot.store.codec import TERMS
from bot.store.requests import RequestStore
from tests.conftest import QUORUM_POLICY


def same_shard(redis: Redis, clock: FakeClock) -> RequestStore:
    """A store whose requests all land on shard 3."""
    ids = (f"t{k:05d}" for k in itertools.count())
    return RequestStore(redis, clock=clock, ids=lambda: next(i for i in ids if on(i, 3)))


def on(rid: str, shard: int) -> bool:
    return keys.shard_of(rid) == shard


async def terms_copies(redis: Redis, shard: int) -> dict[str, str]:
    return cast(dict[str, str], await redis.hgetall(keys.terms(shard)))


async def test_requests_of_one_tier_share_one_copy_of_their_terms(
    redis: Redis, clock: FakeClock, policy: Policy
) -> None:
    store = same_shard(redis, clock)
    a = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    b = (await store.create(policy, tool="refund", args={"amount": 6}, requester="U2")).request
    high = {"amount": 5000}
    c = (await store.create(policy, tool="refund", args=high, requester="U1")).request
    held = [cast(dict[str, str], await redis.hgetall(keys.request(r.id))) for r in (a, b, c)]
    for h in held:
        assert not set(TERMS) & h.keys()  # none of the eight inline
    assert held[0]["terms"] == held[1]["terms"] != held[2]["terms"]
    copies = await terms_copies(redis, 3)
    assert set(copies) == {held[0]["terms"], held[2]["terms"]}
    high_terms = json.loads(copies[held[2]["terms"]])
    assert json.loads(high_terms["approvers"]) == ["UBOSS", "SFINANCE"]
    # every read gives the whole request, terms included
    got = await store.get(c.id)
    assert got == c and got.approvers == ("UBOSS", "SFINANCE")
    assert [r.id for r in await store.list_pending()] == [a.id, b.id, c.id]


async def test_the_terms_decide_who_may_approve_and_when_it_escalates(
    store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    req = await store.create(policy, tool="refund", args={"amount": 5000}, requester="U1")
    high = req.request
    stranger = Decision(event=Event.APPROVE, actor="UNOBODY", payload_hash=high.payload_hash)
    with pytest.raises(NotEligible):
        await store.transition(high.id, stranger)
    assert high.expires_at is not None
    clock.advance(high.expires_at - clock.now)
    moved = (await store.transition(high.id, Decision(event=Event.TIMEOUT))).request
    assert moved.state == State.PENDING_REVIEW and moved.level == 1  # the terms' chain
    oncall = Decision(event=Event.APPROVE, actor="UONCALL", payload_hash=high.payload_hash)
    assert (await store.transition(high.id, oncall)).request.state == State.APPROVED


async def test_a_new_policy_does_not_change_the_terms_of_a_waiting_request(
    redis: Redis, clock: FakeClock, policy: Policy
) -> None:
    store = same_shard(redis, clock)
    old = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    stricter = json.loads(json.dumps(QUORUM_POLICY))
    stricter["tiers"]["medium"]["approvers"] = ["UBOSS"]
    new = (
        await store.create(
            parse_policy(stricter), tool="refund", args={"amount": 5}, requester="U1"
        )
    ).request
    assert new.approvers == ("UBOSS",) and len(await terms_copies(redis, 3)) == 2
    assert (await store.get(old.id)).approvers == ("*",)
    anyone = Decision(event=Event.APPROVE, actor="UANY", payload_hash=old.payload_hash)
    assert (await store.transition(old.id, anyone)).request.state == State.APPROVED
    with pytest.raises(NotEligible):
        await store.transition(new.id, anyone.model_copy(update={"payload_hash": new.payload_hash}))


async def test_without_its_terms_a_request_is_neither_read_nor_decided(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    await redis.delete(keys.terms(keys.shard_of(req.id)))
    fresh = RequestStore(redis)  # no copy cached in this process either
    with pytest.raises(StoreDamaged, match=req.id):
        await fresh.get(req.id)
    approve = Decision(event=Event.APPROVE, actor="UANY", payload_hash=req.payload_hash)
    with pytest.raises(StoreDamaged, match="who may approve it is unknown"):
        await store.transition(req.id, approve)
    assert await redis.hget(keys.request(req.id), "state") == "pending_review"
    assert await redis.llen(keys.audit(req.id)) == 1  # nothing recorded either


async def test_a_create_mends_a_damaged_copy_and_its_requests_read_again(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    first = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    shard = keys.shard_of(first.id)
    ref = cast(str, await redis.hget(keys.request(first.id), "terms"))
    forged = json.loads(cast(str, await redis.hget(keys.terms(shard), ref)))
    forged["approvers"] = '["UMALLORY"]'
    await redis.hset(keys.terms(shard), ref, json.dumps(forged))
    with pytest.raises(StoreDamaged):
        await RequestStore(redis).get(first.id)
    rid = next(f"x{i:05d}" for i in itertools.count() if on(f"x{i:05d}", shard))
    again = RequestStore(redis, ids=lambda: rid)
    made = (await again.create(policy, tool="refund", args={"amount": 7}, requester="U1")).request
    assert made.approvers == ("*",)  # the policy's terms, not the forged ones
    assert (await RequestStore(redis).get(first.id)).approvers == ("*",)


async def test_a_copy_that_no_longer_matches_its_name_is_never_used(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    shard, ref = keys.shard_of(req.id), cast(str, await redis.hget(keys.request(req.id), "terms"))
    forged = json.loads(cast(str, await redis.hget(keys.terms(shard), ref)))
    forged["approvers"] = '["UMALLORY"]'
    await redis.hset(keys.terms(shard), ref, json.dumps(forged, separators=(",", ":")))
    with pytest.raises(StoreDamaged):
        await RequestStore(redis).get(req.id)
    mallory = Decision(event=Event.APPROVE, actor="UMALLORY", payload_hash=req.payload_hash)
    with pytest.raises(StoreDamaged):
        await store.transition(req.id, mallory)
    assert await redis.hget(keys.request(req.id), "state") == "pending_review"
    await redis.hdel(keys.terms(shard), ref)  # no forged copy left for later tests


async def test_without_its_terms_a_request_still_ends_and_never_runs(
    signed_store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock
) -> None:
    """Timers, a stop and the executor's report do not need the terms: a request whose
    copy is gone ends (auto-rejected, cancelled) instead of hanging, and the sweeper's
    batch still fires the healthy timers beside it. Nobody may claim it."""
    store = signed_store  # serve's: its sweeper applies (and signs) the default
    made = [
        (await store.create(policy, tool="refund", args={"amount": i}, requester="U1")).request
        for i in (1, 2, 3, 4)
    ]
    damaged, stopped, healthy, approved = made
    ok = Decision(event=Event.APPROVE, actor="UANY", payload_hash=approved.payload_hash)
    await store.transition(approved.id, ok)
    for r in (damaged, stopped, approved):
        await redis.delete(keys.terms(keys.shard_of(r.id)))
    assert len({keys.shard_of(r.id) for r in made}) == 4  # healthy kept its copy
    with pytest.raises(StoreDamaged):
        await store.transition(approved.id, Decision(event=Event.CLAIM, actor="w1"))
    stop = Decision(event=Event.CANCEL, actor="U1", reason_code="run_stopped")
    assert (await store.transition(stopped.id, stop)).request.state == State.CANCELLED

    assert damaged.expires_at is not None
    clock.advance(damaged.expires_at - clock.now)
    fired = await store.timeout_many([(damaged.id, 1), (healthy.id, 1)])
    assert [m.request.state if m else None for m in fired] == [
        State.AUTO_REJECTED,  # no chain to escalate along: the rejecting default
        State.PENDING_REVIEW,  # escalated to its next level, as ever
    ]
    assert fired[1] is not None and fired[1].request.level == 1
    claim_deadline = await redis.hget(keys.request(approved.id), "expires_at")
    clock.advance(int(cast(str, claim_deadline)) - clock.now)
    (lapsed,) = await store.timeout_many([(approved.id, 2)])
    assert lapsed is not None and lapsed.request.state == State.CANCELLED


async def test_pending_lists_leave_out_a_damaged_request_and_keep_the_rest(
    store: RequestStore, policy: Policy, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.store.terms.CACHE", 1)  # copies evicted between reads too
    args = [{"amount": 5}, {"amount": 5000}, {"amount": 6}, {"amount": 7}]
    made = [
        (await store.create(policy, tool="refund", args=a, requester="U1")).request for a in args
    ]
    await redis.delete(keys.terms(keys.shard_of(made[3].id)))
    fresh = RequestStore(redis)
    assert [r.id for r in await fresh.list_pending()] == [r.id for r in made[:3]]
    assert [r.id for r in await store.list_pending()] == [r.id for r in made[:3]]
