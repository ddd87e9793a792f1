"""Properties of the machine over random histories: it never ends up somewhere it should not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.machine import Step, apply
from bot.core.models import SYSTEM, ActionRequest, Decision, RiskTier
from bot.core.policy import Policy, parse_policy
from bot.core.proposal import propose
from bot.core.states import ALLOWED, FINAL, TRANSIENT, Event, ReasonCode, State
from bot.errors import InvalidTransition

T0 = 1_767_000_000_000
REQUESTER = "U_REQ"
PEOPLE = (REQUESTER, "U_A", "U_B", "U_C")
TIERS = [t.value for t in RiskTier]

PROFILE = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    """A valid policy: 1 to 4 levels per tier, named or open approvers, quorum 1 or 2."""
    tiers: dict[str, Any] = {}
    for tier in TIERS:
        level = st.fixed_dictionaries(
            {"users": st.lists(st.sampled_from(PEOPLE[1:]), min_size=1, max_size=2)},
            optional={"timeout": st.integers(60, 3600)},
        )
        tiers[tier] = {
            "review_timeout": draw(st.integers(60, 3600)),
            "reviewers": {"channels": ["#approvals"]},
            "escalation": draw(st.lists(level, max_size=3)),
            "on_exhausted": draw(
                st.sampled_from(["auto_approved", "auto_approved", "auto_rejected"])
            )
            if tier == "low"
            else "auto_rejected",
            "approvals_required": draw(st.integers(1, 2)),
            "approvers": draw(st.sampled_from([["*"], ["U_A", "U_B"], ["S_OPS"], ["U_C"]])),
            "self_approval": draw(st.booleans()),
            "allow_edit": draw(st.sampled_from([True, True, False])),
        }
    return parse_policy(
        {
            "default_tier": draw(st.sampled_from(["low", "low", *TIERS])),
            "claim_timeout": draw(st.integers(60, 3600)),
            "execution_timeout": draw(st.integers(60, 3600)),
            "tiers": tiers,
        },
        source="generated",
    )


@st.composite
def requests(draw: st.DrawFn) -> ActionRequest:
    req, _ = propose(
        draw(policies()),
        request_id="req-1",
        tool="refund",
        args={"amount": draw(st.integers(0, 5000))},
        requester=REQUESTER,
        now=T0,
        risk=draw(st.sampled_from([None, None, None, *RiskTier])),
    )
    return req


def _approve(req: ActionRequest, i: int) -> Decision:
    """An approval that passes the guards: a person outside the requester, in every group."""
    return Decision(
        event=Event.APPROVE,
        actor=f"U_P{i}",
        actor_groups=tuple(req.eligible()),
        payload_hash=req.payload_hash,
    )


# Valid openings, to start the random walk from every reachable state, not just the first.
PATHS: dict[str, list[str]] = {
    "pending": [],
    "partial": ["approve"],
    "escalated": ["timeout"],
    "approved": ["approve", "approve"],
    "defaulted": ["timeout"] * 5,
    "executing": ["approve", "approve", "claim"],
    "auto_executing": [*["timeout"] * 5, "claim"],
    "rollback": ["approve", "approve", "claim", "fail_comp"],
    "completed": ["approve", "approve", "claim", "succeed"],
    "rejected": ["reject"],
    "edited": ["edit"],
    "edited_twice": ["approve", "edit", "edit"],
}


def _opening(name: str, req: ActionRequest, i: int) -> Decision:
    if name == "approve":
        return _approve(req, i)
    if name == "edit":
        edit = {"event": Event.EDIT_AND_APPROVE, "new_args": {"amount": i, "edited": True}}
        return _approve(req, i).model_copy(update=edit)
    if name == "reject":
        reject = {"event": Event.REJECT, "reason_code": ReasonCode.OTHER}
        return _approve(req, i).model_copy(update=reject)
    if name == "timeout":
        return Decision(event=Event.TIMEOUT, fence=req.version)
    if name == "fail_comp":
        return Decision(event=Event.FAIL, has_compensation=True)
    return Decision(event=Event(name))  # claim, succeed


def walk_to(req: ActionRequest, path: list[str]) -> tuple[ActionRequest, int]:
    now = T0
    for i, name in enumerate(path):
        if name in ("approve", "edit", "timeout") and req.state != State.PENDING_REVIEW:
            continue  # quorum met early, or the default already applied
        if name == "timeout" and req.expires_at is not None:
            now = req.expires_at
        try:
            req = apply(req, _opening(name, req, i), now).request
        except InvalidTransition:
            break  # e.g. claiming what the default rejected: stay where we are
    return req, now


# One random move: an event, who sends it, what they saw, and how much time passed. Half
# the time the event is one the table has a row for from the current state (so histories go
# deep); otherwise it is any event at all.
moves = st.fixed_dictionaries(
    {
        "event": st.just("plausible") | st.sampled_from(list(Event)),
        "pick": st.integers(0, 15),
        "actor": st.sampled_from(("U_P1", "U_P2", "U_A", "U_C", SYSTEM, REQUESTER)),
        "groups": st.sampled_from(["all", "all", ("S_OPS",), ()]),
        "hash": st.sampled_from(["right", "right", "wrong", "none"]),
        "reason": st.sampled_from([*ReasonCode, None, "bogus"]),
        "new_args": st.sampled_from([{"amount": 1}, {"amount": 7, "note": "half"}, None]),
        "fence": st.sampled_from(["none", "current", "stale"]),
        "compensate": st.booleans(),
        "advance": st.sampled_from(["none", "none", "none", "small", "deadline", "past"]),
    }
)


def decision(req: ActionRequest, m: dict[str, Any]) -> Decision:
    event = m["event"]
    if event == "plausible":
        options = sorted({ev for src, ev, _ in ALLOWED if src == req.state} or set(Event))
        event = options[m["pick"] % len(options)]
    seen = {"right": req.payload_hash, "wrong": "f" * 64, "none": None}[m["hash"]]
    fence = {"none": None, "current": req.version, "stale": req.version - 1}[m["fence"]]
    return Decision(
        event=event,
        actor=m["actor"],
        actor_groups=tuple(req.eligible()) if m["groups"] == "all" else m["groups"],
        payload_hash=seen,
        reason_code=m["reason"],
        new_args=m["new_args"],
        fence=fence,
        has_compensation=m["compensate"],
    )


def advance(req: ActionRequest, now: int, how: str) -> int:
    if how == "none":
        return now
    if how == "small" or req.expires_at is None:
        return now + 1000
    if how == "deadline":
        return max(now, req.expires_at)
    return max(now, req.expires_at + 60_000)


def check_step(before: ActionRequest, step: Step) -> None:
    after = step.request
    assert isinstance(after.state, State) and after.state not in TRANSIENT
    assert (after.expires_at is None) == (after.state in FINAL)
    if not step.changed:
        assert after == before
        return
    assert before.state not in FINAL, "a final request moved"
    assert after.version > before.version
    prev = before.state
    for r in step.records:
        assert (r.from_state, r.event, r.to_state) in ALLOWED
        assert r.from_state == prev
        prev = r.to_state
    assert prev == after.state


def run_timeouts(req: ActionRequest) -> Iterator[ActionRequest]:
    """Fire only the sweeper, each time exactly at the deadline; yield after each timeout."""
    while req.expires_at is not None:
        step = apply(req, Decision(event=Event.TIMEOUT, fence=req.version), req.expires_at)
        check_step(req, step)
        assert step.changed, "a due timer did nothing"
        req = step.request
        yield req


@PROFILE
@given(requests(), st.sampled_from(list(PATHS)), st.lists(moves, min_size=3, max_size=30))
def test_random_histories_stay_inside_the_table(
    req: ActionRequest, opening: str, history: list[Any]
) -> None:
    req, now = walk_to(req, PATHS[opening])
    claims = 0
    for m in history:
        now = advance(req, now, m["advance"])
        try:
            step = apply(req, decision(req, m), now)
        except InvalidTransition:
            continue  # refused: the request is unchanged by construction (it is immutable)
        check_step(req, step)
        claims += sum(r.event == Event.CLAIM for r in step.records)
        assert claims <= 1, "the same request was claimed twice"
        req = step.request

    # From wherever the history left it, the sweeper alone brings it to a final state.
    left = len(req.levels) - req.level
    for count, later in enumerate(run_timeouts(req), start=1):
        assert count <= left + 2
        req = later
    assert req.state in FINAL


@PROFILE
@given(requests())
def test_nobody_answering_ends_in_a_final_state(req: ActionRequest) -> None:
    n = len(req.levels)
    trail = [req, *run_timeouts(req)]
    states = [r.state for r in trail]
    left_review = next(i for i, s in enumerate(states) if s != State.PENDING_REVIEW)
    assert left_review == n  # every level had its turn, none was skipped
    assert states[left_review] in (State.AUTO_APPROVED, State.AUTO_REJECTED)
    if states[left_review] == State.AUTO_APPROVED:
        assert req.risk == RiskTier.LOW
    assert states[-1] in FINAL
    assert len(trail) - 1 <= n + 2
    assert [r.level for r in trail[:left_review]] == list(range(left_review))


@PROFILE
@given(requests(), st.lists(moves, max_size=40))
def test_a_human_decision_is_never_taken_from_someone_ineligible(
    req: ActionRequest, history: list[Any]
) -> None:
    now = T0
    for m in history:
        now = advance(req, now, m["advance"])
        d = decision(req, m)
        try:
            step = apply(req, d, now)
        except InvalidTransition:
            continue
        if step.changed and d.event in (Event.APPROVE, Event.EDIT_AND_APPROVE, Event.REJECT):
            eligible = req.eligible()
            withdrawn = d.event == Event.REJECT and d.actor == req.requester
            # The one exception to eligibility: the requester may always withdraw (reject)
            # their own request; saying no can never make anything run.
            assert (
                withdrawn
                or "*" in eligible
                or d.actor in eligible
                or eligible & set(d.actor_groups)
            )
            assert d.actor != req.requester or req.self_approval or withdrawn
            assert d.payload_hash == req.payload_hash
            assert req.expires_at is not None and now < req.expires_at
        req = step.request
