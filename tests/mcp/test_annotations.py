"""The tier an upstream tool's annotations suggest: every combination of the four hints
(given true, given false, left out) against every default tier."""

from __future__ import annotations

import itertools

import pytest

from bot.core.models import RiskTier
from bot.core.policy import TIER_ORDER
from bot.mcp.annotations import Hints, hinted_tier

VALUES = (None, True, False)
ALL = [
    (Hints(*combo), default)
    for combo in itertools.product(VALUES, repeat=4)
    for default in TIER_ORDER
]


def rank(tier: RiskTier) -> int:
    return TIER_ORDER.index(tier)


@pytest.mark.parametrize(("hints", "default"), ALL)
def test_a_hint_never_lowers_the_default_tier(hints: Hints, default: RiskTier) -> None:
    assert rank(hinted_tier(hints, default)) >= rank(default)


@pytest.mark.parametrize(("hints", "default"), ALL)
def test_idempotence_changes_nothing(hints: Hints, default: RiskTier) -> None:
    # Given either way (left out, it is one hint fewer of a tool that may give none).
    given = [Hints(hints.read_only, hints.destructive, v, hints.open_world) for v in (True, False)]
    assert len({hinted_tier(h, default) for h in given}) == 1


@pytest.mark.parametrize(("hints", "default"), ALL)
def test_the_tier_follows_the_spec_reading_of_the_hints(hints: Hints, default: RiskTier) -> None:
    got = hinted_tier(hints, default)
    read_only = hints.read_only is True and hints.destructive is not True
    destructive = hints.destructive is not False and not read_only
    open_world = hints.open_world is not False
    if not hints.given or not destructive:
        assert got == default
    elif open_world:
        assert got == max(default, RiskTier.HIGH, key=rank)
    else:
        assert got == max(default, RiskTier.MEDIUM, key=rank)


@pytest.mark.parametrize(
    ("hints", "default", "tier"),
    [
        (Hints(), RiskTier.LOW, RiskTier.LOW),  # says nothing: the operator's default
        (Hints(read_only=True), RiskTier.LOW, RiskTier.LOW),
        (Hints(read_only=True), RiskTier.HIGH, RiskTier.HIGH),  # never lowered
        (Hints(read_only=True, destructive=True), RiskTier.LOW, RiskTier.HIGH),  # worse word
        (Hints(read_only=False), RiskTier.LOW, RiskTier.HIGH),  # spec: destructive, open
        (Hints(destructive=True, open_world=False), RiskTier.LOW, RiskTier.MEDIUM),
        (Hints(destructive=True, open_world=False), RiskTier.MEDIUM, RiskTier.MEDIUM),
        (Hints(destructive=False), RiskTier.LOW, RiskTier.LOW),
        (Hints(open_world=False), RiskTier.LOW, RiskTier.MEDIUM),  # destructive by default
        (Hints(destructive=True), RiskTier.CRITICAL, RiskTier.CRITICAL),
        (Hints(idempotent=True), RiskTier.MEDIUM, RiskTier.HIGH),
    ],
)
def test_named_cases(hints: Hints, default: RiskTier, tier: RiskTier) -> None:
    assert hinted_tier(hints, default) == tier


def test_the_words_fill_in_the_spec_defaults() -> None:
    assert Hints().words() == "no annotations"
    assert Hints(open_world=False).words() == ("writes, destructive, not idempotent, closed world")
