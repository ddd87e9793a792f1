"""The dry run's and the shadow policy's judgement, on calls built by hand."""

from __future__ import annotations

import copy
from typing import Any

from bot.core.models import RiskTier
from bot.core.policy import parse_policy
from bot.core.policydiff import Outcome, Recorded, diff
from bot.core.proposal import propose
from bot.core.verdicts import (
    Call,
    ShadowVerdict,
    disagreements,
    enforced,
    judge,
    shadow_verdict,
)
from tests.support.policy_pair import NEW, OLD

MIN = 60_000
AT = 1_800_000_000_000
old, new = parse_policy(OLD), parse_policy(NEW)


def _call(tool: str, **args: Any) -> Call:
    return Call(tool=tool, args=args, requester="billing-agent", at=AT)


def _rec(rid: str, call: Call, tier: str, outcome: Outcome, result: str, **kw: Any) -> Recorded:
    return Recorded(id=rid, call=call, tier=RiskTier(tier), outcome=outcome, result=result, **kw)


def test_the_same_policy_never_disagrees_with_itself() -> None:
    for call in (_call("refund", amount=5), _call("deploy"), _call("send_email"), _call("x")):
        assert disagreements(judge(old, call), judge(old, call)) == ()


def test_each_kind_of_change_is_named() -> None:
    def kinds(call: Call) -> tuple[str, ...]:
        return disagreements(judge(old, call), judge(new, call))

    assert kinds(_call("refund", amount=50)) == ("tier", "review")
    assert kinds(_call("refund", amount=500)) == ("timeout",)
    assert kinds(_call("refund", amount=5000)) == ("approvers",)
    assert kinds(_call("send_email")) == ("review",)
    assert kinds(_call("deploy")) == ()


def test_a_channel_the_other_policy_does_not_review_in_is_a_disagreement() -> None:
    moved = copy.deepcopy(OLD)
    moved["tiers"]["medium"]["reviewers"] = {"channels": ["#money"]}
    call = Call(tool="refund", args={"amount": 500}, requester="a", at=AT, channel="#approvals")
    other = judge(parse_policy(moved), call)
    assert other.refused and not judge(old, call).refused
    # medium names no approvers: the reviewer channel's members decide, so they change too
    assert disagreements(judge(old, call), other) == ("reviewers", "approvers", "channel")


def test_a_callers_raise_is_judged_by_both_policies() -> None:
    raised = Call(tool="refund", args={"amount": 10}, requester="a", at=AT, risk=RiskTier.HIGH)
    assert (judge(new, raised).tier, judge(new, raised).review) == (RiskTier.HIGH, True)
    assert judge(new, _call("refund", amount=10)).review is False


def test_person_decisions_the_new_policy_would_not_have_waited_for() -> None:
    history = [
        # approved by a person; the new policy lets refunds up to 100 run unreviewed
        _rec("r1", _call("refund", amount=50), "medium", Outcome.PERSON, "approved",
             decided_by="UALICE", waited_ms=2 * MIN),
        # approved after 20 minutes; the new medium tier gives up after 10
        _rec("r2", _call("refund", amount=500), "medium", Outcome.PERSON, "approved",
             decided_by="UBOB", waited_ms=20 * MIN),
        # rejected after 5 minutes: in time under both
        _rec("r3", _call("refund", amount=600), "medium", Outcome.PERSON, "rejected",
             decided_by="UALICE", waited_ms=5 * MIN),
        # ran without review; the new policy sends it to a person
        _rec("r4", _call("send_email"), "low", Outcome.NO_REVIEW, "approved", waited_ms=0),
        # nobody answered in 30 minutes: the new, shorter chain changes nothing there
        _rec("r5", _call("refund", amount=700), "medium", Outcome.DEFAULT, "auto_rejected",
             waited_ms=30 * MIN),
    ]  # fmt: skip
    d = diff(old, new, history)
    assert d.requests == 5
    assert d.tiers == {
        (RiskTier.MEDIUM, RiskTier.LOW): 1,
        (RiskTier.MEDIUM, RiskTier.MEDIUM): 3,
        (RiskTier.LOW, RiskTier.LOW): 1,
    }
    assert (d.review_dropped, d.review_added) == (1, 1)
    assert [(c.request_id, c.becomes, c.why) for c in d.to_auto] == [
        ("r1", "no_review", "review"),
        ("r2", "auto_rejected", "timeout"),
    ]
    assert [(c.request_id, c.becomes) for c in d.to_person] == [("r4", "person")]
    assert d.kinds == {"timeout": 3}
    assert {(t.tier.value, t.field, t.old, t.new) for t in d.terms} == {
        ("medium", "review_timeout", "30m", "10m"),
        ("high", "approvers", "UBOSS", "UBOSS, ULEAD"),
    }
    assert d.unlike_recorded == [] and d.refused == []


def test_a_default_a_longer_chain_would_have_kept_before_a_person() -> None:
    longer = copy.deepcopy(OLD)
    longer["tiers"]["medium"]["review_timeout"] = "2h"
    timed_out = _rec("r1", _call("refund", amount=700), "medium", Outcome.DEFAULT,
                     "auto_rejected", waited_ms=30 * MIN)  # fmt: skip
    d = diff(old, parse_policy(longer), [timed_out])
    assert [(c.request_id, c.becomes, c.why) for c in d.to_person] == [("r1", "person", "timeout")]


def test_requests_recorded_under_another_policy_are_named() -> None:
    # recorded at high, where the old file gives medium: the old file was not in effect
    d = diff(old, new, [_rec("r9", _call("refund", amount=500), "high", Outcome.OPEN, "x")])
    assert d.unlike_recorded == ["r9"]


def test_the_shadow_verdict_survives_the_hash_and_junk_reads_as_none() -> None:
    call = _call("refund", amount=50)
    v = shadow_verdict(judge(old, call), new, call)
    assert (v.tier, v.review, v.differs) == (RiskTier.LOW, False, ("tier", "review"))
    assert ShadowVerdict.loads(v.dumps()) == v
    for junk in ("", "{", "[]", '{"tier": "huge", "review": 1, "differs": []}'):
        assert ShadowVerdict.loads(junk) is None


def test_what_a_create_reads_off_its_request_is_what_judge_gives() -> None:
    raised = Call(tool="refund", args={"amount": 10}, requester="a", at=AT, risk=RiskTier.HIGH)
    for call in (_call("refund", amount=50), _call("deploy"), _call("send_email"), raised):
        req, review = propose(
            old, request_id="r1", tool=call.tool, args=call.args, requester=call.requester,
            now=call.at, risk=call.risk,
        )  # fmt: skip
        assert enforced(req, review) == judge(old, call)
