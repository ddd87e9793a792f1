"""Standing approvals, the pure part: the policy's `standing`, the bounds a grant takes
from an approved call, and whether a later call falls inside them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.core.grants import (
    Grant,
    bounds_of,
    covers,
    crosses_zero,
    expiry,
    grant_of,
    is_number,
    reason_of,
    scopes,
    set_range,
    standing_max,
    within,
)
from bot.core.policy import DEFAULT_POLICY, Policy, parse_policy
from bot.core.proposal import propose
from bot.errors import ConfigError

BASE: dict[str, Any] = yaml.safe_load(
    """
tiers:
  low: {review_timeout: 4h, reviewers: {channels: ["#a"]}}
  medium:
    review_timeout: 30m
    reviewers: {channels: ["#a"]}
    standing: {max: 1h, scope: requester}
  high: {review_timeout: 15m, reviewers: {channels: ["#a"]}, approvers: ["ULEAD"]}
  critical:
    review_timeout: 5m
    reviewers: {channels: ["#a"]}
    approvers: ["ULEAD"]
    approvals_required: 2
tools:
  refund: {tier: medium, rules: [{if: "amount > 1000", tier: high}]}
"""
)


def policy(**tiers: dict[str, Any]) -> Policy:
    data = copy.deepcopy(BASE)
    for name, extra in tiers.items():
        data["tiers"][name].update(extra)
    return parse_policy(data, source="p.yaml")


def test_a_tier_may_allow_standing_approvals_of_at_most_its_max() -> None:
    p = policy()
    assert standing_max(p, p.classify("refund", {"amount": 5}).tier) == 3_600_000
    assert standing_max(p, p.classify("refund", {"amount": 5000}).tier) is None
    assert all(tp.standing is None for tp in DEFAULT_POLICY.tiers.values())


def test_standing_on_critical_or_on_a_quorum_is_refused_naming_the_fix() -> None:
    with pytest.raises(ConfigError) as critical:
        policy(critical={"standing": {"max": "10m"}})
    assert "tiers.critical.standing" in str(critical.value)
    assert "fix: remove 'standing' from the critical tier" in str(critical.value)
    with pytest.raises(ConfigError) as quorum:
        policy(high={"standing": {"max": "10m"}, "approvals_required": 2})
    assert "tiers.high.standing" in str(quorum.value)
    assert "approvals_required: 1" in str(quorum.value)
    with pytest.raises(ConfigError, match="scope"):
        policy(medium={"standing": {"max": "1h", "scope": "everyone"}})


def _req(p: Policy, args: dict[str, Any], *, run_id: str | None = "r1", requester: str = "bot"):  # type: ignore[no-untyped-def]
    req, _ = propose(
        p, request_id="q1", tool="refund", args=args, requester=requester, now=0, run_id=run_id
    )
    return req


def _grant(req: Any, **kw: Any) -> Grant:
    fields: dict[str, Any] = {
        "id": "G1",
        "tool": req.tool,
        "risk": req.risk,
        "scope": "run",
        "requester": req.requester,
        "owner": req.owner,
        "run_id": req.run_id,
        "bounds": bounds_of(req.args),
        "uses": 3,
        "granted_by": "UAPPROVER",
        "created_at": 0,
        "expires_at": 3_600_000,
        "source": req.id,
    }
    return Grant(**(fields | kw))


def test_scopes_follow_the_policy_and_need_a_run_for_run_scope() -> None:
    p = policy()
    assert scopes(p, _req(p, {"amount": 5})) == ("run", "requester")
    assert scopes(p, _req(p, {"amount": 5}, run_id=None)) == ("requester",)
    only_run = policy(medium={"standing": {"max": "1h", "scope": "run"}})
    assert scopes(only_run, _req(only_run, {"amount": 5})) == ("run",)
    assert scopes(p, _req(p, {"amount": 5000})) == ()  # high: no standing


def test_a_grant_covers_the_same_call_a_smaller_amount_and_nothing_else() -> None:
    p = policy()
    g = _grant(_req(p, {"amount": 50, "to": "cust-1"}))
    assert covers(g, _req(p, {"amount": 50, "to": "cust-1"}))
    assert covers(g, _req(p, {"amount": 10, "to": "cust-1"}))
    assert not covers(g, _req(p, {"amount": 51, "to": "cust-1"}))
    assert not covers(g, _req(p, {"amount": 10, "to": "cust-2"}))
    assert not covers(g, _req(p, {"amount": 10}))  # an argument missing
    assert not covers(g, _req(p, {"amount": 10, "to": "cust-1", "note": "x"}))  # one more
    assert not covers(g, _req(p, {"amount": 10, "to": "cust-1"}, run_id="r2"))
    assert not covers(g, _req(p, {"amount": 10, "to": "cust-1"}, requester="other"))
    wide = _grant(_req(p, {"amount": 50, "to": "cust-1"}), scope="requester", run_id=None)
    assert covers(wide, _req(p, {"amount": 10, "to": "cust-1"}, run_id="r2"))


def test_a_widened_bound_never_moves_the_tier_a_rule_raises() -> None:
    p = policy()
    wide = set_range(bounds_of({"amount": 50}), "amount", 0, 5000)
    g = _grant(_req(p, {"amount": 50}), bounds=wide)
    assert covers(g, _req(p, {"amount": 900}))
    assert not covers(g, _req(p, {"amount": 2000}))  # high by rule: not the grant's tier


def test_a_range_must_hold_the_approved_value_in_exact_numbers() -> None:
    b = bounds_of({"amount": 50, "to": "x", "flag": True})
    assert b["flag"].kind == "eq" and b["to"].kind == "eq" and b["amount"].kind == "range"
    refused = (
        ("amount", 0, 49),  # leaves out the approved 50
        ("amount", 51, 60),
        ("to", 0, 5),  # no numeric range
        ("amount", 0, "60"),
        ("amount", 0, float("inf")),
        ("amount", 0, 2**53 + 1),  # not carried exactly by JSON
    )
    for name, lo, hi in refused:
        with pytest.raises(ValueError):
            set_range(b, name, lo, hi)
    moved = set_range(b, "amount", 10, 60)["amount"]
    assert (moved.lo, moved.hi, moved.value) == (10, 60, 50)


def test_a_grant_never_passes_a_number_across_zero_unless_the_range_says_so() -> None:
    p = policy()
    refund = _grant(_req(p, {"amount": 50, "to": "cust-1"}))
    assert not covers(refund, _req(p, {"amount": -1_000_000, "to": "cust-1"}))
    assert not covers(refund, _req(p, {"amount": -1, "to": "cust-1"}))
    assert covers(refund, _req(p, {"amount": 0, "to": "cust-1"}))
    debit = bounds_of({"delta": -30})["delta"]  # a negative approval: from -30 up to 0
    assert (debit.lo, debit.hi) == (-30, 0) and not crosses_zero(debit)
    both = set_range(bounds_of({"amount": 50, "to": "cust-1"}), "amount", -5, 50)
    assert crosses_zero(both["amount"])
    assert within(both, {"amount": -5, "to": "cust-1"})
    assert not within(both, {"amount": -6, "to": "cust-1"})


def test_numbers_past_what_json_carries_are_outside_every_bound_never_an_error() -> None:
    b = bounds_of({"amount": 50})
    huge = -(10**400)
    assert not is_number(huge) and not is_number(2**53 + 1) and is_number(2**53)
    assert not within(b, {"amount": huge})
    assert not within(b, {"amount": float("nan")}) and not within(b, {"amount": float("-inf")})
    assert bounds_of({"amount": huge})["amount"].kind == "eq"  # no range around it


def test_expiry_never_passes_the_tiers_max_and_reasons_name_the_grant() -> None:
    assert expiry(1000, 7_200_000, 3_600_000) == 1000 + 3_600_000
    assert expiry(1000, 60_000, 3_600_000) == 1000 + 60_000
    assert grant_of(reason_of("Gabc")) == "Gabc"
    assert grant_of("no_review") is None and grant_of(None) is None


scalars = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.text(max_size=8),
    st.booleans(),
    st.none(),
)
args_st = st.dictionaries(st.text(min_size=1, max_size=5), scalars, max_size=5)


@settings(derandomize=True)
@given(args_st)
def test_a_call_is_always_inside_the_bounds_taken_from_it(args: dict[str, Any]) -> None:
    assert within(bounds_of(args), args)


@settings(derandomize=True)  # seeded: CI and a laptop walk the same cases
@given(args_st, args_st)
@example({"a": -1}, {"a": 0})  # a negative approval's range reaches up to zero
def test_inside_means_same_names_equal_values_and_numbers_between_zero_and_approved(
    approved: dict[str, Any], later: dict[str, Any]
) -> None:
    inside = within(bounds_of(approved), later)
    if inside:
        assert set(later) == set(approved)
        for name, value in approved.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                assert later[name] == value and type(later[name]) is type(value)
            else:
                got = later[name]
                assert not isinstance(got, bool) and min(0, value) <= got <= max(0, value)


@settings(derandomize=True)
@given(args_st, st.text(min_size=1, max_size=5), scalars)
def test_changing_any_identifier_leaves_the_bounds(
    approved: dict[str, Any], name: str, value: Any
) -> None:
    if name not in approved or (
        isinstance(approved[name], int | float) and not isinstance(approved[name], bool)
    ):
        return
    if value == approved[name] and type(value) is type(approved[name]):
        return
    assert not within(bounds_of(approved), {**approved, name: value})


def test_no_grant_ever_covers_a_proposal() -> None:
    """A proposal waits for a person to choose among its calls: even a grant made on a
    call with the same (empty) arguments passes none of them."""
    p = policy()
    g = _grant(_req(p, {}))
    assert covers(g, _req(p, {}))
    proposal = _req(p, {}).model_copy(update={"candidates": ({"amount": 1}, {"amount": 2})})
    assert not covers(g, proposal)
