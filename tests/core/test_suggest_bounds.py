"""Bounds read from approved calls, written as the policy's rules: every call they came
from stays inside, and a value past them in any direction is raised back to the tier
it had. Seeded properties, so CI and a laptop walk the same cases."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.models import RiskTier
from bot.core.rules import Rule
from bot.core.suggestions.bounds import Loose, bounds_of

NAMES = st.sampled_from(["amount", "to", "currency", "urgent", "note"])
WORDS = st.text(alphabet="abcdefghij@.", min_size=1, max_size=8)
VALUES = st.one_of(
    st.integers(-(2**53), 2**53),
    st.floats(-1e6, 1e6, allow_nan=False),
    WORDS,
    st.booleans(),
)
CALLS = st.lists(st.dictionaries(NAMES, VALUES, min_size=1, max_size=4), min_size=1, max_size=12)


def _raised(rules: list[Rule], args: dict[str, Any]) -> bool:
    return any(r.matches(args) for r in rules)


def _rules(calls: list[dict[str, Any]]) -> list[Rule]:
    bounds, _ = bounds_of(calls)
    return [Rule.model_validate(r) for b in bounds for r in b.rules(RiskTier.MEDIUM)]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(CALLS)
def test_every_approved_call_lies_inside_its_bounds(calls: list[dict[str, Any]]) -> None:
    rules = _rules(calls)
    assert not any(_raised(rules, args) for args in calls)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(CALLS, st.integers(1, 10**6))
def test_a_number_past_the_range_is_raised(calls: list[dict[str, Any]], past: int) -> None:
    bounds, _ = bounds_of(calls)
    for b in bounds:
        if not b.is_range:
            continue
        assert b.low is not None and b.high is not None
        rules = [Rule.model_validate(r) for r in b.rules(RiskTier.MEDIUM)]
        for value in (b.high + past, b.low - past):
            assert _raised(rules, {**calls[0], b.argument: value})
            assert not b.holds({**calls[0], b.argument: value})


def test_text_seen_is_listed_and_anything_else_raised() -> None:
    calls = [{"to": "a@x.io", "amount": 5}, {"to": "b@x.io", "amount": 40}]
    rules = _rules(calls)
    assert [r.condition for r in rules] == [
        "amount > 40", "amount < 5", 'to not in ["a@x.io", "b@x.io"]',
    ]  # fmt: skip
    assert _raised(rules, {"to": "c@x.io", "amount": 10})
    assert _raised(rules, {"amount": 10})  # a missing argument is outside
    assert not _raised(rules, {"to": "b@x.io", "amount": 10})


def test_what_cannot_be_held_is_named() -> None:
    calls = [
        {"amount": 1, "items": [1], "note": f"n{i}", "x": "a > b", **({"y": 1} if i else {})}
        for i in range(30)
    ]
    bounds, loose = bounds_of(calls)
    assert [b.argument for b in bounds] == ["amount"]
    assert {u.argument: u.why for u in loose} == {
        "items": Loose.SHAPE, "note": Loose.MANY, "x": Loose.UNWRITABLE, "y": Loose.NOT_ALWAYS,
    }  # fmt: skip
