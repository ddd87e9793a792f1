"""A transition names the version it was checked or signed at; a request that has left that
version is not touched: nothing moves and nothing is audited, whatever the step (a
person's decision, a claim, a claim's refusal). And a rejected call is never claimed."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import AlreadyResolved
from bot.gate.claims import ClaimCheck, claim_checked
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.decisions import approve
from tests.support.keys import serve_signer


def check(policy: Policy) -> ClaimCheck:
    return ClaimCheck(serve_signer().public(), policy)


async def test_a_decision_signed_at_a_version_left_does_nothing(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """A second approval signed on the request as it stood before the first landed (a
    digest's click carries the version it showed): its seal names a version the request
    will never reach from here, so it must not be counted."""
    req = (await signed_store.create(policy, tool="deploy", args={}, requester="a")).request
    first = (await signed_store.transition(req.id, approve(req, "U1"))).request
    trail = await audit.lines(redis, req.id)
    late = await signed_store.transition(req.id, approve(req, "U2"), expect_version=req.version)
    assert late.noop
    now = await signed_store.get(req.id)
    assert (now.state, now.version) == (State.PENDING_REVIEW, first.version)
    assert [a.actor for a in now.approvals] == ["U1"]
    assert await audit.lines(redis, req.id) == trail
    # At the version it stands at, the same approval counts.
    moved = await signed_store.transition(req.id, approve(req, "U2"), expect_version=now.version)
    assert moved.request.state == State.APPROVED


async def test_a_claim_at_a_version_left_does_nothing(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (
        await signed_store.create(policy, tool="refund", args={"amount": 5}, requester="a")
    ).request
    approved = (await signed_store.transition(req.id, approve(req, "U2"))).request
    trail = await audit.lines(redis, req.id)
    claim = Decision(event=Event.CLAIM, actor="exec", claim_token="tokenA-1234567")
    assert (await signed_store.transition(req.id, claim, expect_version=req.version)).noop
    # Nor is a refusal checked at that version audited: the request moved, not a forgery.
    stale = await signed_store.transition(
        req.id, claim, expect_version=req.version, forged="checked on an older version"
    )
    assert stale.noop
    now = await signed_store.get(req.id)
    assert (now.state, now.version) == (State.APPROVED, approved.version)
    assert await audit.lines(redis, req.id) == trail
    claimed = await claim_checked(signed_store, req.id, actor="exec", check=check(policy))
    assert claimed.state == State.EXECUTING


async def test_a_claim_after_a_rejection_is_refused_and_the_request_stays_cancelled(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (
        await signed_store.create(policy, tool="refund", args={"amount": 5}, requester="a")
    ).request
    no = Decision(
        event=Event.REJECT, actor="U2", payload_hash=req.payload_hash, reason_code="policy"
    )
    rejected = (await signed_store.transition(req.id, no)).request
    assert rejected.state == State.CANCELLED
    with pytest.raises(AlreadyResolved, match="rejected"):
        await claim_checked(signed_store, req.id, actor="exec", check=check(policy))
    with pytest.raises(AlreadyResolved):  # nor straight through the store
        await signed_store.transition(req.id, Decision(event=Event.CLAIM, actor="exec2"))
    now = await signed_store.get(req.id)
    assert (now.state, now.version, now.fence) == (State.CANCELLED, rejected.version, None)
    entries = await audit.entries(redis, req.id)
    assert [e.event for e in entries if e.kind == "transition"] == [
        "create",
        "reject",
        "close",
    ]
    assert [e.kind for e in entries] == ["transition"] * 3  # a refused claim writes nothing
