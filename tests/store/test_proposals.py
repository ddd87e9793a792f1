"""Proposals in the store: the chosen candidate is what is approved, sealed and claimed;
nothing else of a proposal ever is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.core.args.payload import payload_hash
from bot.core.candidates import candidate_hashes, proposal_hash
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import ForgedDecision, InvalidTransition, PayloadError
from bot.gate.claims import ClaimCheck, claim_checked
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.keys import serve_signer

CANDS: list[dict[str, Any]] = [{"amount": 5, "to": "A-1"}, {"amount": 7, "to": "A-2"}]


def check(policy: Policy) -> ClaimCheck:
    return ClaimCheck(serve_signer().public(), policy)


async def _proposal(store: RequestStore, policy: Policy, **kw: Any) -> ActionRequest:
    made = await store.create(
        policy, tool=kw.pop("tool", "refund"), args={}, requester="agent", candidates=CANDS, **kw
    )
    return made.request


def _choose(req: ActionRequest, i: int, actor: str) -> Decision:
    return Decision(
        event=Event.EDIT_AND_APPROVE,
        actor=actor,
        payload_hash=proposal_hash(req.tool, CANDS),
        new_args=CANDS[i],
    )


async def test_the_chosen_candidate_is_sealed_claimed_and_audited(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = await _proposal(signed_store, policy)
    assert req.args == {} and req.payload_hash == proposal_hash("refund", CANDS)
    assert req.state == State.PENDING_REVIEW and req.candidates == tuple(CANDS)
    assert req.on_exhausted == State.AUTO_REJECTED  # nobody choosing never approves one
    moved = await signed_store.transition(req.id, _choose(req, 1, "U2"))
    got = moved.request
    assert got.state == State.APPROVED and got.args == CANDS[1]
    assert got.payload_hash == payload_hash("refund", CANDS[1]) != req.payload_hash
    claimed = await claim_checked(signed_store, req.id, actor="exec", check=check(policy))
    assert claimed.args == CANDS[1]  # the chosen one, never candidates[0]
    lines = [json.loads(x) for x in await audit.lines(redis, req.id)]
    created = next(e for e in lines if e["event"] == "create")
    assert created["candidates"] == list(candidate_hashes("refund", CANDS))
    choice = next(e for e in lines if e["event"] == "edit_and_approve")
    assert choice["chosen"] == payload_hash("refund", CANDS[1])
    assert choice["candidates"] == list(candidate_hashes("refund", CANDS))
    assert choice["payload_hash"] == choice["chosen"] and choice["seal"]


async def test_only_a_candidate_approves_a_proposal(
    signed_store: RequestStore, policy: Policy
) -> None:
    req = await _proposal(signed_store, policy)
    seen = proposal_hash("refund", CANDS)
    plain = Decision(event=Event.APPROVE, actor="U2", payload_hash=seen)
    with pytest.raises(InvalidTransition, match="choose one of its candidates"):
        await signed_store.transition(req.id, plain)
    other = Decision(
        event=Event.EDIT_AND_APPROVE, actor="U2", payload_hash=seen, new_args={"amount": 9000}
    )
    with pytest.raises(InvalidTransition, match="not one of the proposal's candidates"):
        await signed_store.transition(req.id, other)
    assert (await signed_store.get(req.id)).state == State.PENDING_REVIEW


async def test_an_unchosen_proposal_approved_behind_the_stores_back_never_runs(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = await _proposal(signed_store, policy)
    # Rewritten by hand to approved: its args ({}) do not hash to its payload hash.
    from bot.store import keys

    await redis.hset(keys.request(req.id), mapping={"state": "approved"})
    with pytest.raises(ForgedDecision):
        await claim_checked(signed_store, req.id, actor="exec", check=check(policy))


async def test_a_quorum_needs_its_votes_on_the_same_candidate(
    signed_store: RequestStore, policy: Policy
) -> None:
    req = await _proposal(signed_store, policy, tool="deploy")  # critical: 2 approvals
    one = (await signed_store.transition(req.id, _choose(req, 0, "U1"))).request
    assert one.state == State.PENDING_REVIEW and [a.actor for a in one.approvals] == ["U1"]
    # U2 picks the other candidate: votes for different candidates do not add up.
    two = (await signed_store.transition(req.id, _choose(req, 1, "U2"))).request
    assert two.state == State.PENDING_REVIEW and [a.actor for a in two.approvals] == ["U2"]
    assert two.args == CANDS[1]
    three = (await signed_store.transition(req.id, _choose(req, 1, "U3"))).request
    assert three.state == State.APPROVED
    assert [a.actor for a in three.approvals] == ["U2", "U3"]
    claimed = await claim_checked(signed_store, req.id, actor="exec", check=check(policy))
    assert claimed.args == CANDS[1]


@pytest.mark.parametrize(
    ("args", "cands", "why"),
    [
        ({}, [CANDS[0]], "2 to 5"),
        ({}, [{"amount": i} for i in range(6)], "2 to 5"),
        ({}, [CANDS[0], dict(CANDS[0])], "repeats"),
        ({"amount": 1}, CANDS, "either args or candidates"),
    ],
)
async def test_bad_proposals_are_refused(
    signed_store: RequestStore, policy: Policy, args: Any, cands: Any, why: str
) -> None:
    with pytest.raises(PayloadError, match=why):
        await signed_store.create(
            policy, tool="refund", args=args, requester="agent", candidates=cands
        )


async def test_a_candidate_that_does_not_fit_the_schema_refuses_the_proposal(
    signed_store: RequestStore, policy: Policy
) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer", "maximum": 6}}}
    with pytest.raises(PayloadError, match="candidate 2 does not fit"):
        await signed_store.create(
            policy,
            tool="refund",
            args={},
            requester="agent",
            candidates=CANDS,
            args_schema=schema,
        )
