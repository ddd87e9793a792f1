"""Approval-fatigue signals worth a person's attention, read from the decisions
(bot/core/fatigue.py): the figures the report shows, turned into the few that call for
an operator to act. Pure: decisions in, signals out; the time is passed in.

- `too_fast`: more than `fast_share` of an approver's last `fast_window` decisions came
  sooner than the card can be read. Fewer decisions than the window: no signal yet.
- `carries`: one person took more than `carry_share` of a tier's decisions by people
  this week, out of at least `carry_min`.
- `auto_rise`: a tier's requests that ended without a person (nobody answered, the
  default applied) rose this week to at least `rise_min`, and by half over last week.

Each signal has a `key` (kind and subject) so the one who tells can tell it once a day.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from bot.core.fatigue import PERSON, WEEK_MS, Decided

TIMED_OUT = ("auto_approved", "auto_rejected")  # the default applied: nobody answered
TOO_FAST = "too_fast"
CARRIES = "carries"
AUTO_RISE = "auto_rise"


@dataclass(frozen=True)
class Watch:
    fast_window: int = 20
    fast_share: float = 0.5
    carry_share: float = 0.75
    carry_min: int = 10
    rise_min: int = 5
    rise_factor: float = 1.5


@dataclass(frozen=True)
class Signal:
    kind: str  # TOO_FAST, CARRIES, AUTO_RISE
    tier: str | None = None
    approver: str | None = None
    count: int = 0  # too fast; the approver's decisions of the tier; this week's timeouts
    total: int = 0  # the window; the tier's decisions by people; last week's timeouts

    @property
    def key(self) -> str:
        """What 'the same signal' is, for telling it once a day."""
        return ":".join(p for p in (self.kind, self.tier, self.approver) if p)


def _too_fast(people: list[Decided], watch: Watch) -> list[Signal]:
    by_actor: dict[str, list[Decided]] = defaultdict(list)
    for d in people:
        by_actor[d.actor].append(d)
    out = []
    for actor, mine in sorted(by_actor.items()):
        last = mine[-watch.fast_window :]
        if len(last) < watch.fast_window:
            continue
        fast = sum(d.too_fast for d in last)
        if fast > watch.fast_share * len(last):
            out.append(Signal(TOO_FAST, approver=actor, count=fast, total=len(last)))
    return out


def _carries(people: list[Decided], since: int, watch: Watch) -> list[Signal]:
    by_tier: dict[str, Counter[str]] = defaultdict(Counter)
    for d in people:
        if d.at >= since:
            by_tier[d.tier][d.actor] += 1
    out = []
    for tier, who in sorted(by_tier.items()):
        total = sum(who.values())
        actor, n = min(who.items(), key=lambda kv: (-kv[1], kv[0]))
        if total >= watch.carry_min and n > watch.carry_share * total:
            out.append(Signal(CARRIES, tier=tier, approver=actor, count=n, total=total))
    return out


def _auto_rise(decided: list[Decided], now_ms: int, watch: Watch) -> list[Signal]:
    weeks: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for d in decided:
        if d.outcome in TIMED_OUT and now_ms - 2 * WEEK_MS <= d.at <= now_ms:
            weeks[d.tier][0 if d.at > now_ms - WEEK_MS else 1] += 1
    return [
        Signal(AUTO_RISE, tier=tier, count=this, total=last)
        for tier, (this, last) in sorted(weeks.items())
        if this >= watch.rise_min and this >= watch.rise_factor * last and this > last
    ]


def signals(decided: Iterable[Decided], now_ms: int, watch: Watch = Watch()) -> list[Signal]:
    """The signals the decisions up to `now_ms` call for, each once."""
    ordered = sorted((d for d in decided if d.at <= now_ms), key=lambda d: (d.at, d.request_id))
    people = [d for d in ordered if d.outcome in PERSON]
    return [
        *_too_fast(people, watch),
        *_carries(people, now_ms - WEEK_MS, watch),
        *_auto_rise(ordered, now_ms, watch),
    ]
