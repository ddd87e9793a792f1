"""The request store against a real Valkey: one round trip per transition."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.args.payload import payload_hash
from bot.core.models import Decision, RiskTier
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import (
    AlreadyResolved,
    Expired,
    IdempotencyConflict,
    InvalidTransition,
    NotEligible,
    NotFound,
    StalePayload,
)
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.decisions import approve


async def test_create_then_approve_records_who_and_what_they_saw(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    made = await store.create(
        policy, tool="refund", args={"amount": 50, "to": "C-9"}, requester="UAGENT", run_id="run1"
    )
    req = made.request
    assert made.created and req.state == State.PENDING_REVIEW and req.risk == "medium"
    moved = await store.transition(req.id, approve(req.payload_hash, "UANA", view_hash="v1"))
    assert moved.request.state == State.APPROVED
    assert moved.request.resolution is not None and moved.request.resolution.actor == "UANA"
    trail = await audit.entries(redis, req.id)
    assert [(e.event, e.from_state, e.to_state) for e in trail] == [
        ("create", None, "pending_review"),
        ("approve", "pending_review", "approved"),
    ]
    assert trail[1].actor == "UANA" and trail[1].view_hash == "v1"
    assert trail[1].payload_hash == req.payload_hash
    assert await audit.verify_request(redis, req.id) is None


async def test_idempotent_create_same_payload_returns_same_request(
    store: RequestStore, policy: Policy
) -> None:
    a = await store.create(
        policy, tool="refund", args={"amount": 5}, requester="U1", idempotency_key="run1:call7"
    )
    b = await store.create(
        policy, tool="refund", args={"amount": 5}, requester="U1", idempotency_key="run1:call7"
    )
    assert a.created and not b.created and a.request.id == b.request.id
    with pytest.raises(IdempotencyConflict, match="run1:call7"):
        await store.create(
            policy, tool="refund", args={"amount": 6}, requester="U1", idempotency_key="run1:call7"
        )


async def test_rule_raises_tier_and_named_approvers_apply(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 4200}, requester="U1")).request
    assert req.risk == "high"
    with pytest.raises(NotEligible, match="not among its approvers"):
        await store.transition(req.id, approve(req.payload_hash, "URANDOM"))
    moved = await store.transition(
        req.id, approve(req.payload_hash, "UFIN", actor_groups=("SFINANCE",))
    )
    assert moved.request.state == State.APPROVED
    kinds = [(e.kind, e.actor, e.reason_code) for e in await audit.entries(redis, req.id)]
    assert ("refused", "URANDOM", "not_eligible") in kinds


async def test_requester_cannot_approve_own_action(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 1}, requester="U1")).request
    with pytest.raises(NotEligible, match="asked for by you"):
        await store.transition(req.id, approve(req.payload_hash, "U1"))
    assert (await store.get(req.id)).state == State.PENDING_REVIEW
    assert (await audit.entries(redis, req.id))[-1].kind == "refused"


async def test_second_decider_learns_who_won(
    store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 1}, requester="U1")).request
    await store.transition(req.id, approve(req.payload_hash, "UANA"))
    with pytest.raises(AlreadyResolved) as err:
        await store.transition(
            req.id,
            Decision(
                event=Event.REJECT,
                actor="UBOB",
                payload_hash=req.payload_hash,
                reason_code="too_risky",
            ),
        )
    assert err.value.by == "UANA" and err.value.how == "approved" and err.value.at == clock.now
    # The winner's double click returns the original outcome, not an error.
    again = await store.transition(req.id, approve(req.payload_hash, "UANA"))
    assert again.repeat and again.request.version == 2


async def test_reject_needs_reason_and_closes_to_cancelled(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 1}, requester="U1")).request
    with pytest.raises(InvalidTransition, match="reason code"):
        await store.transition(
            req.id, Decision(event=Event.REJECT, actor="U2", payload_hash=req.payload_hash)
        )
    moved = await store.transition(
        req.id,
        Decision(
            event=Event.REJECT,
            actor="U2",
            payload_hash=req.payload_hash,
            reason_code="wrong_target",
            text="wrong customer",
        ),
    )
    assert moved.request.state == State.CANCELLED
    assert moved.request.resolution is not None
    assert moved.request.resolution.reason_code == "wrong_target"
    events = [(e.event, e.to_state) for e in await audit.entries(redis, req.id)]
    assert events[-2:] == [("reject", "rejected"), ("close", "cancelled")]
    repeat = await store.transition(
        req.id,
        Decision(
            event=Event.REJECT, actor="U2", payload_hash=req.payload_hash, reason_code="other"
        ),
    )
    assert repeat.repeat


async def test_stale_payload_and_expired_decisions_are_refused(
    store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 1}, requester="U1")).request
    with pytest.raises(StalePayload):
        await store.transition(req.id, approve("0" * 64, "U2"))
    clock.advance(10 * 60_000)
    with pytest.raises(Expired):
        await store.transition(req.id, approve(req.payload_hash, "U2"))
    assert (await store.get(req.id)).state == State.PENDING_REVIEW


async def test_edit_and_approve_keeps_both_hashes(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 900}, requester="U1")).request
    moved = await store.transition(
        req.id,
        Decision(
            event=Event.EDIT_AND_APPROVE,
            actor="U2",
            payload_hash=req.payload_hash,
            new_args={"amount": 90},
        ),
    )
    new = moved.request
    assert new.state == State.APPROVED and new.args == {"amount": 90}
    assert new.original_hash == req.payload_hash and new.payload_hash != req.payload_hash
    last = (await audit.entries(redis, req.id))[-1]
    assert last.event == "edit_and_approve" and last.payload_hash == new.payload_hash
    assert '"original_hash":"' + req.payload_hash in last.raw


async def test_quorum_needs_two_distinct_people(store: RequestStore, policy: Policy) -> None:
    req = (await store.create(policy, tool="deploy", args={"svc": "api"}, requester="U1")).request
    one = await store.transition(req.id, approve(req.payload_hash, "UA"))
    assert one.request.state == State.PENDING_REVIEW and len(one.request.approvals) == 1
    same = await store.transition(req.id, approve(req.payload_hash, "UA"))
    assert same.repeat and len(same.request.approvals) == 1
    two = await store.transition(req.id, approve(req.payload_hash, "UB"))
    assert two.request.state == State.APPROVED
    assert [a.actor for a in two.request.approvals] == ["UA", "UB"]


async def test_no_review_tool_is_approved_by_policy_and_audited(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (
        await store.create(policy, tool="move_claw", args={"dir": "left"}, requester="U1")
    ).request
    assert req.state == State.APPROVED and req.resolution is not None
    assert req.resolution.reason_code == "no_review"
    trail = await audit.entries(redis, req.id)
    assert [(e.actor, e.to_state) for e in trail] == [
        ("U1", "pending_review"),
        ("system", "approved"),
    ]


async def test_execution_lifecycle_and_single_claim(store: RequestStore, policy: Policy) -> None:
    req = (await store.create(policy, tool="move_claw", args={}, requester="U1")).request
    claimed = await store.transition(req.id, Decision(event=Event.CLAIM, actor="worker-1"))
    assert claimed.request.state == State.EXECUTING
    with pytest.raises(InvalidTransition):
        await store.transition(req.id, Decision(event=Event.CLAIM, actor="worker-2"))
    failed = await store.transition(
        req.id, Decision(event=Event.FAIL, detail="boom", has_compensation=True)
    )
    assert failed.request.state == State.ROLLBACK_PENDING and failed.request.detail == "boom"
    done = await store.transition(req.id, Decision(event=Event.ROLLBACK_OK))
    assert done.request.state == State.ROLLED_BACK and done.request.expires_at is None


async def test_unknown_request_is_named_in_the_error(store: RequestStore) -> None:
    with pytest.raises(NotFound, match="No request with id nope"):
        await store.transition("nope", Decision(event=Event.CLAIM))
    with pytest.raises(NotFound, match="No request with id nope"):
        await store.transition("nope", Decision(event=Event.EDIT_AND_APPROVE, new_args={"a": 1}))
    with pytest.raises(NotFound, match="No request with id nope"):
        await store.get("nope")


async def test_list_pending_oldest_first(
    store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    made = []
    for i in range(5):
        clock.advance(1000)
        made.append(
            (
                await store.create(
                    policy, tool="refund", args={"i": i, "amount": 1}, requester="U1"
                )
            ).request
        )
    await store.transition(made[2].id, approve(made[2].payload_hash, "U2"))
    pending = await store.list_pending()
    assert [r.id for r in pending] == [made[i].id for i in (0, 1, 3, 4)]


async def test_requester_may_withdraw_their_own_request_by_rejecting(
    store: RequestStore, policy: Policy
) -> None:
    # High risk: only named approvers may approve, but saying no is always safe.
    req = (
        await store.create(policy, tool="refund", args={"amount": 5000}, requester="UREQ")
    ).request
    moved = await store.transition(
        req.id,
        Decision(
            event=Event.REJECT,
            actor="UREQ",
            payload_hash=req.payload_hash,
            reason_code="other",
            text="I changed my mind",
        ),
    )
    assert moved.request.state == State.CANCELLED
    assert moved.request.resolution is not None and moved.request.resolution.actor == "UREQ"


async def test_what_a_request_carries_survives_storage(store: RequestStore, policy: Policy) -> None:
    # The notifier threads a request under its run; the card shows who
    # rejected and why; the API finds a retry by its key: all must come back as written.
    made = await store.create(
        policy,
        tool="refund",
        args={"n": 1, "amount": 1},
        requester="U1",
        run_id="run7",
        idempotency_key="key-1",
    )
    rid = made.request.id
    await store.transition(
        rid,
        Decision(
            event=Event.REJECT,
            actor="U2",
            payload_hash=made.request.payload_hash,
            reason_code="too_risky",
            text="not this week",
            view_hash="v" * 64,
        ),
    )
    got = await store.get(rid)
    assert (got.run_id, got.idempotency_key) == ("run7", "key-1")
    assert got.resolution is not None
    assert (got.resolution.text, got.resolution.view_hash) == ("not this week", "v" * 64)


async def test_a_caller_may_raise_the_risk_of_a_request(
    store: RequestStore, policy: Policy
) -> None:
    # The API's `risk` field: an agent that knows a call is riskier than its tool says.
    made = await store.create(
        policy, tool="refund", args={"n": 1}, requester="U1", risk=RiskTier.CRITICAL
    )
    assert (await store.get(made.request.id)).risk == RiskTier.CRITICAL
    assert made.request.quorum == 2  # the critical tier's two approvals


async def test_arguments_keep_the_callers_order_and_the_hash_ignores_it(
    store: RequestStore, policy: Policy
) -> None:
    # The card lists arguments in the order the caller gave; Redis must not sort them.
    args = {"to": "C-9", "amount": 50, "note": {"z": 1, "a": 2}}
    req = (await store.create(policy, tool="refund", args=args, requester="U1")).request
    got = await store.get(req.id)
    assert list(got.args) == ["to", "amount", "note"] and list(got.args["note"]) == ["z", "a"]
    same = {"amount": 50, "note": {"a": 2, "z": 1}, "to": "C-9"}
    assert payload_hash("refund", same) == got.payload_hash  # the hash ignores key order
    edited = {"to": "C-9", "amount": 40}
    moved = await store.transition(
        req.id,
        Decision(
            event=Event.EDIT_AND_APPROVE, actor="U2", payload_hash=got.payload_hash, new_args=edited
        ),
    )
    assert list(moved.request.args) == ["to", "amount"]
    assert list((await store.get(req.id)).args) == ["to", "amount"]


async def test_a_member_of_another_workspace_is_not_anyone(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    # medium: approvers "*"; a Slack Connect guest is not "anyone in the workspace"
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    with pytest.raises(NotEligible):
        await store.transition(req.id, approve(req.payload_hash, "UGUEST", foreign=True))
    refused = (await audit.entries(redis, req.id))[-1]
    assert (refused.kind, refused.actor, refused.reason_code) == (
        "refused",
        "UGUEST",
        "not_eligible",
    )
    assert (await store.get(req.id)).state == State.PENDING_REVIEW
    moved = await store.transition(req.id, approve(req.payload_hash, "UHOME"))
    assert moved.request.state == State.APPROVED


async def test_a_member_of_another_workspace_named_by_id_may_decide(
    store: RequestStore, policy: Policy
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 4200}, requester="U1")).request
    moved = await store.transition(req.id, approve(req.payload_hash, "UBOSS", foreign=True))
    assert moved.request.state == State.APPROVED
