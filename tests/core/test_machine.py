"""The pure state machine: each test is one thing a person or an agent would notice."""

from __future__ import annotations

from typing import Any

import pytest

from bot.core.args.payload import payload_hash
from bot.core.machine import Record, Step, apply
from bot.core.models import SYSTEM, ActionRequest, Decision, Level, RiskTier
from bot.core.states import FINAL, HUMAN_EVENTS, Event, ReasonCode, State
from bot.errors import AlreadyResolved, Expired, InvalidTransition, NotEligible, StalePayload

E, S = Event, State
MIN = 60_000
T0 = 1_767_000_000_000  # a fixed "now" in epoch ms
ARGS = {"amount": 500, "to": "acct-42"}


def make(**kw: Any) -> ActionRequest:
    """A fresh request in pending_review: level 0 is a channel, level 1 the on-call user."""
    tool = kw.pop("tool", "refund")
    args = kw.pop("args", ARGS)
    levels = kw.pop(
        "levels",
        (
            Level(timeout_ms=30 * MIN, channels=("#approvals",)),
            Level(timeout_ms=15 * MIN, users=("U_ONCALL",)),
        ),
    )
    fields: dict[str, Any] = {
        "id": "req-1",
        "tool": tool,
        "args": args,
        "payload_hash": payload_hash(tool, args),
        "requester": "U_AGENT",
        "risk": RiskTier.MEDIUM,
        "created_at": T0,
        "state": S.PENDING_REVIEW,
        "expires_at": T0 + levels[0].timeout_ms,
        "levels": levels,
        "allow_edit": True,
    }
    fields.update(kw)
    return ActionRequest(**fields)


def act(
    req: ActionRequest, event: Event, actor: str = "U_ALICE", now: int = T0 + 1, **kw: Any
) -> Step:
    """Submit `event` as `actor`; human events see the current payload unless told otherwise."""
    if event in HUMAN_EVENTS:
        kw.setdefault("payload_hash", req.payload_hash)
    if event == E.REJECT:
        kw.setdefault("reason_code", ReasonCode.TOO_RISKY)
    return apply(req, Decision(event=event, actor=actor, **kw), now)


def approved(**kw: Any) -> ActionRequest:
    return act(make(**kw), E.APPROVE).request


def executing(**kw: Any) -> ActionRequest:
    return act(approved(**kw), E.CLAIM, SYSTEM, now=T0 + 2).request


def rec(event: Event, src: State, dst: State) -> Record:
    return Record(event, src, dst)


# -- approve and quorum ---------------------------------------------------------------------


def test_approve_moves_to_approved_with_a_claim_deadline() -> None:
    req = make(claim_timeout_ms=10 * MIN)
    step = act(req, E.APPROVE, now=T0 + 5)
    out = step.request
    assert out.state == S.APPROVED
    assert out.expires_at == T0 + 5 + 10 * MIN
    assert out.version == req.version + 1
    assert out.resolution is not None and (out.resolution.actor, out.resolution.at) == (
        "U_ALICE",
        T0 + 5,
    )
    assert step.records == (rec(E.APPROVE, S.PENDING_REVIEW, S.APPROVED),)


def test_quorum_of_two_needs_two_distinct_people() -> None:
    req = make(quorum=2)
    first = act(req, E.APPROVE, "U_ALICE", now=T0 + 10)
    assert first.request.state == S.PENDING_REVIEW
    assert [a.actor for a in first.request.approvals] == ["U_ALICE"]
    assert first.request.expires_at == req.expires_at  # a partial approval keeps the deadline
    assert first.records == (rec(E.APPROVE, S.PENDING_REVIEW, S.PENDING_REVIEW),)

    again = act(first.request, E.APPROVE, "U_ALICE", now=T0 + 20)
    assert again.repeat and not again.changed
    assert again.request == first.request  # counted once, nothing moved

    second = act(first.request, E.APPROVE, "U_BOB", now=T0 + 30)
    assert second.request.state == S.APPROVED
    assert [a.actor for a in second.request.approvals] == ["U_ALICE", "U_BOB"]
    assert second.request.resolution is not None and second.request.resolution.actor == "U_BOB"


# -- edit and approve -------------------------------------------------------------------------


def test_edit_and_approve_replaces_args_and_audits_both_hashes() -> None:
    req = make()
    new = {"amount": 50, "to": "acct-42"}
    out = act(req, E.EDIT_AND_APPROVE, new_args=new).request
    assert out.state == S.APPROVED
    assert out.args == new
    assert out.payload_hash == payload_hash("refund", new) != req.payload_hash
    assert out.original_hash == req.payload_hash


def test_edit_makes_earlier_approvals_lapse_and_keeps_the_first_hash() -> None:
    req = make(quorum=2)
    partial = act(req, E.APPROVE, "U_ALICE").request
    edited = act(partial, E.EDIT_AND_APPROVE, "U_BOB", new_args={"amount": 50, "to": "x"}).request
    assert edited.state == S.PENDING_REVIEW
    assert [a.actor for a in edited.approvals] == ["U_BOB"]  # Alice approved another call
    with pytest.raises(StalePayload):
        act(edited, E.APPROVE, "U_ALICE", payload_hash=req.payload_hash)
    again = act(edited, E.EDIT_AND_APPROVE, "U_CAROL", new_args={"amount": 5, "to": "x"}).request
    assert again.original_hash == req.payload_hash  # the very first call, not the middle one
    done = act(again, E.APPROVE, "U_ALICE").request
    assert done.state == S.APPROVED and done.args == {"amount": 5, "to": "x"}


def test_an_approver_may_still_edit_and_a_double_submitted_edit_counts_once() -> None:
    partial = act(make(quorum=2), E.APPROVE, "U_ALICE").request
    new = {"amount": 1, "to": "acct-42"}
    edited = act(partial, E.EDIT_AND_APPROVE, "U_ALICE", new_args=new)
    assert not edited.repeat and edited.request.args == new  # the edit is not swallowed
    twice = act(
        edited.request,
        E.EDIT_AND_APPROVE,
        "U_ALICE",
        new_args=new,
        payload_hash=partial.payload_hash,
    )
    assert twice.repeat and twice.request == edited.request


def test_edit_refused_when_the_policy_forbids_it_or_args_are_missing() -> None:
    with pytest.raises(InvalidTransition, match="does not allow editing refund"):
        act(make(allow_edit=False), E.EDIT_AND_APPROVE, new_args={"amount": 1})
    with pytest.raises(InvalidTransition, match="needs the new arguments"):
        act(make(), E.EDIT_AND_APPROVE)


# -- reject ----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [None, "because", ""])
def test_reject_needs_a_known_reason_code(code: str | None) -> None:
    with pytest.raises(InvalidTransition, match="reason code") as info:
        act(make(), E.REJECT, reason_code=code)
    assert all(c.value in str(info.value) for c in ReasonCode)


def test_reject_closes_to_cancelled_in_one_step() -> None:
    step = act(make(), E.REJECT, "U_BOB", reason_code="wrong_target", text="wrong account")
    assert step.records == (
        rec(E.REJECT, S.PENDING_REVIEW, S.REJECTED),
        rec(E.CLOSE, S.REJECTED, S.CANCELLED),
    )
    out = step.request
    assert out.state == S.CANCELLED and out.expires_at is None
    assert out.resolution is not None
    assert (out.resolution.actor, out.resolution.reason_code, out.resolution.text) == (
        "U_BOB",
        "wrong_target",
        "wrong account",
    )
    assert act(out, E.REJECT, "U_BOB").repeat
    with pytest.raises(AlreadyResolved):
        act(out, E.APPROVE, "U_ALICE")


# -- guards: deadline, payload, eligibility --------------------------------------------------


def test_decision_at_or_after_expires_at_is_expired() -> None:
    req = make()
    assert req.expires_at is not None
    assert act(req, E.APPROVE, now=req.expires_at - 1).request.state == S.APPROVED
    for late in (req.expires_at, req.expires_at + MIN):
        for event in (E.APPROVE, E.REJECT):
            with pytest.raises(Expired, match="auto_rejected"):
                act(req, event, now=late)


@pytest.mark.parametrize("seen", ["0" * 64, None])
@pytest.mark.parametrize("event", [E.APPROVE, E.REJECT, E.EDIT_AND_APPROVE])
def test_a_decision_on_a_changed_payload_is_stale(seen: str | None, event: Event) -> None:
    with pytest.raises(StalePayload, match="changed after you looked"):
        act(make(), event, payload_hash=seen, new_args={"amount": 1})


def test_requester_may_not_approve_their_own_action_unless_allowed() -> None:
    with pytest.raises(NotEligible, match="asked for by you"):
        act(make(), E.APPROVE, "U_AGENT")
    assert act(make(self_approval=True), E.APPROVE, "U_AGENT").request.state == S.APPROVED


def test_named_approvers_groups_and_escalation_levels() -> None:
    req = make(approvers=("U_BOSS", "S_FINANCE"))
    with pytest.raises(NotEligible, match="U_BOSS") as info:
        act(req, E.APPROVE, "U_MALLORY", actor_groups=("S_SALES",))
    assert "U_MALLORY" in str(info.value)
    assert act(req, E.APPROVE, "U_BOSS").request.state == S.APPROVED
    assert act(req, E.APPROVE, "U_DAN", actor_groups=("S_FINANCE",)).request.state == S.APPROVED
    with pytest.raises(NotEligible):  # the on-call of level 1 may not decide before escalation
        act(req, E.APPROVE, "U_ONCALL")
    assert req.expires_at is not None
    escalated = act(req, E.TIMEOUT, SYSTEM, now=req.expires_at).request
    out = act(escalated, E.APPROVE, "U_ONCALL", now=req.expires_at + 1).request
    assert out.state == S.APPROVED


# -- timeouts and escalation -----------------------------------------------------------------


def test_timeout_escalates_then_applies_the_default() -> None:
    req = make()
    assert req.expires_at is not None
    late = req.expires_at + 7  # the sweeper may fire a little late
    step = act(req, E.TIMEOUT, SYSTEM, now=late)
    assert step.records == (
        rec(E.TIMEOUT, S.PENDING_REVIEW, S.ESCALATED),
        rec(E.REASSIGN, S.ESCALATED, S.PENDING_REVIEW),
    )
    up = step.request
    assert (up.state, up.level) == (S.PENDING_REVIEW, 1)
    assert up.expires_at == late + 15 * MIN
    assert up.assignees.users == ("U_ONCALL",)

    last = act(up, E.TIMEOUT, SYSTEM, now=up.expires_at)
    assert last.records == (rec(E.TIMEOUT, S.PENDING_REVIEW, S.AUTO_REJECTED),)
    assert last.request.state == S.AUTO_REJECTED and last.request.expires_at is None
    assert last.request.resolution is not None and last.request.resolution.actor == SYSTEM


def test_low_risk_may_auto_approve_and_then_be_claimed() -> None:
    req = make(risk=RiskTier.LOW, on_exhausted=S.AUTO_APPROVED, levels=(Level(timeout_ms=MIN),))
    out = act(req, E.TIMEOUT, SYSTEM, now=T0 + MIN).request
    assert out.state == S.AUTO_APPROVED
    assert out.expires_at == T0 + MIN + out.claim_timeout_ms
    assert act(out, E.CLAIM, SYSTEM, now=T0 + MIN + 1).request.state == S.EXECUTING


@pytest.mark.parametrize("risk", [RiskTier.MEDIUM, RiskTier.HIGH, RiskTier.CRITICAL])
def test_auto_approve_is_refused_above_low_risk_whatever_the_request_says(risk: RiskTier) -> None:
    req = make(risk=risk, on_exhausted=S.AUTO_APPROVED, levels=(Level(timeout_ms=MIN),))
    out = act(req, E.TIMEOUT, SYSTEM, now=T0 + MIN).request
    assert out.state == S.AUTO_REJECTED


def test_stale_early_and_late_timers_are_noops() -> None:
    req = act(make(quorum=2), E.APPROVE).request  # version 2, same deadline
    assert req.expires_at is not None
    stale = act(req, E.TIMEOUT, SYSTEM, now=req.expires_at, fence=req.version - 1)
    early = act(req, E.TIMEOUT, SYSTEM, now=req.expires_at - 1, fence=req.version)
    for step in (stale, early):
        assert step.noop and not step.changed and step.request == req
    fired = act(req, E.TIMEOUT, SYSTEM, now=req.expires_at, fence=req.version)
    assert fired.changed and fired.request.level == 1
    done = act(make(), E.REJECT).request
    assert act(done, E.TIMEOUT, SYSTEM, now=T0 + 100 * MIN).noop


# -- execution -------------------------------------------------------------------------------


def test_claim_happens_exactly_once() -> None:
    req = approved(execution_timeout_ms=15 * MIN)
    out = act(req, E.CLAIM, SYSTEM, now=T0 + 2).request
    assert out.state == S.EXECUTING and out.expires_at == T0 + 2 + 15 * MIN
    with pytest.raises(AlreadyResolved):
        act(out, E.CLAIM, SYSTEM, now=T0 + 3)
    with pytest.raises(InvalidTransition) as info:
        act(make(), E.CLAIM, SYSTEM)  # nobody approved it yet
    assert not isinstance(info.value, AlreadyResolved)


def test_a_second_claim_is_told_the_call_was_claimed_not_only_approved() -> None:
    out = executing()
    with pytest.raises(AlreadyResolved) as info:
        act(out, E.CLAIM, SYSTEM, now=T0 + 3)
    err = info.value
    assert str(err).startswith("Already claimed: an executor took this call and it is executing")
    assert "approved by U_ALICE" in str(err)
    # who decided first stays in the structured fields the API returns
    assert (err.by, err.at, err.how) == ("U_ALICE", T0 + 1, "approved")
    done = act(out, E.SUCCEED, SYSTEM, now=T0 + 4).request
    with pytest.raises(AlreadyResolved, match=r"Already claimed: .* it is completed"):
        act(done, E.CLAIM, SYSTEM, now=T0 + 5)
    with pytest.raises(AlreadyResolved, match="Already approved by U_ALICE"):
        act(out, E.APPROVE, "U_BOB", now=T0 + 5)  # a person's late click: who decided


def test_unclaimed_approval_is_never_run_late() -> None:
    req = approved()
    assert req.expires_at is not None
    with pytest.raises(Expired):
        act(req, E.CLAIM, SYSTEM, now=req.expires_at)
    out = act(req, E.TIMEOUT, SYSTEM, now=req.expires_at).request
    assert out.state == S.CANCELLED and out.expires_at is None


def test_success_completes() -> None:
    out = act(executing(), E.SUCCEED, SYSTEM, detail="refunded").request
    assert (out.state, out.detail, out.expires_at) == (S.COMPLETED, "refunded", None)


def test_failure_with_compensation_rolls_back_or_needs_a_person() -> None:
    step = act(executing(), E.FAIL, SYSTEM, now=T0 + 3, detail="boom", has_compensation=True)
    assert step.records == (
        rec(E.FAIL, S.EXECUTING, S.FAILED),
        rec(E.COMPENSATE, S.FAILED, S.ROLLBACK_PENDING),
    )
    pending = step.request
    assert pending.state == S.ROLLBACK_PENDING and pending.detail == "boom"
    assert pending.expires_at == T0 + 3 + pending.execution_timeout_ms
    assert act(pending, E.ROLLBACK_OK, SYSTEM).request.state == S.ROLLED_BACK
    assert act(pending, E.ROLLBACK_FAILED, SYSTEM).request.state == S.MANUAL_INTERVENTION
    timed_out = act(pending, E.TIMEOUT, SYSTEM, now=pending.expires_at).request
    assert timed_out.state == S.MANUAL_INTERVENTION


def test_failure_without_compensation_needs_a_person() -> None:
    step = act(executing(), E.FAIL, SYSTEM, detail="boom")
    assert step.records == (
        rec(E.FAIL, S.EXECUTING, S.FAILED),
        rec(E.GIVE_UP, S.FAILED, S.MANUAL_INTERVENTION),
    )
    assert step.request.expires_at is None


def test_executor_vanishing_mid_call_needs_a_person() -> None:
    req = executing()
    assert req.expires_at is not None
    step = act(req, E.TIMEOUT, SYSTEM, now=req.expires_at)
    assert step.records == (
        rec(E.TIMEOUT, S.EXECUTING, S.FAILED),
        rec(E.GIVE_UP, S.FAILED, S.MANUAL_INTERVENTION),
    )
    assert step.request.state in FINAL


# -- cancel and already-resolved -------------------------------------------------------------


@pytest.mark.parametrize("build", [make, approved])
def test_cancel_withdraws_what_has_not_started(build: Any) -> None:
    out = act(build(), E.CANCEL, "U_OPERATOR", text="run stopped").request
    assert out.state == S.CANCELLED and out.expires_at is None
    assert out.resolution is not None


def test_cancel_refused_once_side_effects_may_have_started() -> None:
    with pytest.raises(InvalidTransition):
        act(executing(), E.CANCEL, "U_OPERATOR")


def test_already_resolved_says_who_when_and_how() -> None:
    req = act(make(), E.APPROVE, "U_ALICE", now=T0 + 42).request
    with pytest.raises(AlreadyResolved) as info:
        act(req, E.REJECT, "U_BOB", now=T0 + 50)
    err = info.value
    assert (err.by, err.at, err.how) == ("U_ALICE", T0 + 42, "approved")
    assert "Already approved by U_ALICE" in str(err)

    edited = act(make(), E.EDIT_AND_APPROVE, "U_ALICE", new_args={"amount": 1}).request
    with pytest.raises(AlreadyResolved, match="edited and approved"):
        act(edited, E.APPROVE, "U_BOB")


@pytest.mark.parametrize(
    ("risk", "on_exhausted", "how"),
    [
        (RiskTier.MEDIUM, S.AUTO_REJECTED, "auto_rejected"),
        (RiskTier.LOW, S.AUTO_APPROVED, "auto_approved"),
    ],
)
def test_already_resolved_by_the_policy_default(
    risk: RiskTier, on_exhausted: State, how: str
) -> None:
    req = make(risk=risk, on_exhausted=on_exhausted, levels=(Level(timeout_ms=MIN),))
    out = act(req, E.TIMEOUT, SYSTEM, now=T0 + MIN).request
    if out.state == S.AUTO_APPROVED:
        out = act(out, E.CLAIM, SYSTEM, now=T0 + MIN + 1).request
    with pytest.raises(AlreadyResolved) as info:
        act(out, E.APPROVE, "U_ALICE", now=T0 + MIN + 2)
    assert (info.value.by, info.value.at, info.value.how) == (SYSTEM, T0 + MIN, how)


def test_a_member_of_another_workspace_counts_only_when_named() -> None:
    anyone = make(approvers=("*",))
    with pytest.raises(NotEligible):
        act(anyone, E.APPROVE, "U_GUEST", foreign=True)
    assert act(anyone, E.APPROVE, "U_HOME").request.state == S.APPROVED
    named = make(approvers=("U_GUEST",))
    assert act(named, E.APPROVE, "U_GUEST", foreign=True).request.state == S.APPROVED
