"""Where each fatigue signal starts: the thresholds read as the docs state them
(docs/fatigue.md, "What the operators are told"), one decision either side."""

from __future__ import annotations

from bot.core.fatigue import WEEK_MS, Decided
from bot.core.fatigue_signals import AUTO_RISE, CARRIES, TOO_FAST, Signal, signals

NOW = 100 * WEEK_MS


def _person(i: int, actor: str, seconds: float, tier: str = "medium") -> Decided:
    at = NOW - 1000 * (i + 1) * 60
    return Decided(f"r{actor}{i}", tier, "approved", at, actor, int(at - seconds * 1000), 1)


def _timeout(i: int, weeks_ago: int, tier: str = "medium") -> Decided:
    return Decided(f"t{weeks_ago}-{i}", tier, "auto_rejected", NOW - weeks_ago * WEEK_MS - i - 1)


def _kinds(found: list[Signal]) -> list[str]:
    return [s.key for s in found]


def test_too_fast_needs_more_than_half_of_a_full_window() -> None:
    # a card of one line takes 2.3 s to read: 1 s is too fast, 30 s is not
    def alice(fast: int, total: int) -> list[Decided]:
        return [
            _person(i, "UALICE", 1 if i < fast else 30, ("low", "high")[i % 2])
            for i in range(total)
        ]

    others = [_person(i, f"U{i}", 30, t) for i in range(10) for t in ("low", "high")]
    assert TOO_FAST + ":UALICE" not in _kinds(signals(alice(10, 20) + others, NOW))
    assert TOO_FAST + ":UALICE" in _kinds(signals(alice(11, 20) + others, NOW))
    assert TOO_FAST + ":UALICE" not in _kinds(signals(alice(19, 19) + others, NOW))
    # only the last 20 count: ten fast ones long before do not
    old = [_person(100 + i, "UALICE", 1) for i in range(10)]
    assert TOO_FAST + ":UALICE" not in _kinds(signals(alice(10, 20) + old + others, NOW))


def test_carrying_a_tier_needs_more_than_three_quarters_of_ten() -> None:
    def week(mine: int, theirs: int) -> list[Decided]:
        return [_person(i, "UKID", 30) for i in range(mine)] + [
            _person(50 + i, "UBOB", 30) for i in range(theirs)
        ]

    assert _kinds(signals(week(8, 2), NOW)) == [CARRIES + ":medium:UKID"]
    assert _kinds(signals(week(9, 3), NOW)) == []  # 75%: not more than
    assert _kinds(signals(week(9, 0), NOW)) == []  # fewer than ten decisions


def test_timeouts_rise_by_half_from_five() -> None:
    def weeks(this: int, last: int) -> list[Decided]:
        return [_timeout(i, 0) for i in range(this)] + [_timeout(i, 1) for i in range(last)]

    assert _kinds(signals(weeks(6, 4), NOW)) == [AUTO_RISE + ":medium"]
    assert _kinds(signals(weeks(5, 4), NOW)) == []  # not half again as many
    assert _kinds(signals(weeks(4, 0), NOW)) == []  # fewer than five
    assert _kinds(signals(weeks(5, 0), NOW)) == [AUTO_RISE + ":medium"]
    got = signals(weeks(6, 4), NOW)[0]
    assert (got.count, got.total) == (6, 4)
