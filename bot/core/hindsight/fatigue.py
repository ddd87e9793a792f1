"""Approval-fatigue figures: how fast people decide, who decides most, what the policy
decides alone. Pure: decisions in, figures out; the window's end (`now_ms`) is passed in.

A person's decision is timed from when its card was first shown (the notifier records
`card_at` as it saves the card; a request decided before any card was posted, or from
before that field existed, is timed from its creation). It is "too fast" when it came
sooner than a person can read the card: `READ_BASE_S` plus `READ_PER_LINE_S` for each
line the card showed, the lines derived from the call's arguments as the card lays them
out (one line for the tool, then each argument's indented JSON).
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.core.models import SYSTEM, AuditEntry

READ_BASE_S = 2.0  # the least time to take in any card: the tool, the buttons
READ_PER_LINE_S = 0.3  # a quick reader's pace over one more line of arguments
WEEK_MS = 7 * 86_400_000
SLACK_MS = 3_600_000
PERSON = ("approved", "rejected")  # outcomes a person chose
AUTO = ("auto_approved", "auto_rejected", "no_review")  # outcomes the policy chose
OUTCOMES = (*PERSON, *AUTO)
TIERS = ("low", "medium", "high", "critical")


@dataclass(frozen=True)
class Decided:
    """One decision on one request: a person's (with its card time) or the policy's."""

    request_id: str
    tier: str
    outcome: str  # one of OUTCOMES
    at: int
    actor: str = SYSTEM
    shown_at: int | None = None  # when the card was first shown (persons only)
    lines: int = 0  # the lines of arguments the card showed

    @property
    def seconds(self) -> float | None:
        if self.outcome not in PERSON or self.shown_at is None:
            return None
        return max(0, self.at - self.shown_at) / 1000

    @property
    def too_fast(self) -> bool:
        secs = self.seconds
        return secs is not None and secs < reading_floor(self.lines)


def reading_floor(lines: int) -> float:
    """The seconds a person needs to read a card of `lines` lines before deciding."""
    return READ_BASE_S + READ_PER_LINE_S * lines


def lines_shown(args: Mapping[str, Any]) -> int:
    """The lines the card gives the call: the tool's line, then every argument's
    indented JSON (a nested object takes as many lines as it has)."""
    total = 1
    for value in args.values():
        total += len(json.dumps(value, indent=2, ensure_ascii=False, default=str).splitlines())
    return total


def decisions_of(
    rid: str,
    tier: str,
    args: Mapping[str, Any],
    shown_at: int | None,
    entries: Iterable[AuditEntry],
) -> list[Decided]:
    """Every decision a request's audit trail records: each person's approval (a quorum
    of two counts two), edit-and-approve or rejection, each policy default on timeout,
    and a create the policy approved without review. Refusals are not decisions."""
    n = lines_shown(args)
    out: list[Decided] = []
    for e in entries:
        if e.kind != "transition":
            continue
        if e.event == "approve" and e.actor == SYSTEM:  # exempt at creation (reason no_review)
            out.append(Decided(rid, tier, "no_review", e.at))
        elif e.event in ("approve", "edit_and_approve"):
            out.append(Decided(rid, tier, "approved", e.at, e.actor, shown_at, n))
        elif e.event == "reject":
            out.append(Decided(rid, tier, "rejected", e.at, e.actor, shown_at, n))
        elif e.event == "timeout" and e.to_state in ("auto_approved", "auto_rejected"):
            out.append(Decided(rid, tier, e.to_state, e.at))
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (an observed value, never an interpolation)."""
    if not values:
        return None
    ranked = sorted(values)
    return ranked[max(0, math.ceil(q * len(ranked)) - 1)]


@dataclass
class Figures:
    """The figures of one group of decisions (a tier, or one approver in a tier)."""

    outcomes: Counter[str] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)
    too_fast: int = 0

    def add(self, d: Decided) -> None:
        self.outcomes[d.outcome] += 1
        if (secs := d.seconds) is not None:
            self.seconds.append(secs)
        self.too_fast += d.too_fast

    @property
    def by_people(self) -> int:
        return sum(self.outcomes[o] for o in PERSON)

    @property
    def median(self) -> float | None:
        return percentile(self.seconds, 0.5)

    @property
    def p90(self) -> float | None:
        return percentile(self.seconds, 0.9)

    def rate(self, outcome: str) -> float | None:
        """The share of people's decisions with `outcome` (approved or rejected)."""
        return self.outcomes[outcome] / self.by_people if self.by_people else None

    def as_json(self) -> dict[str, Any]:
        return {
            "decisions": self.by_people,
            "outcomes": {o: self.outcomes[o] for o in OUTCOMES},
            "median_s": self.median,
            "p90_s": self.p90,
            "too_fast": self.too_fast,
            "approval_rate": self.rate("approved"),
            "rejection_rate": self.rate("rejected"),
        }


@dataclass
class TierFigures(Figures):
    approvers: dict[str, Figures] = field(default_factory=lambda: defaultdict(Figures))

    @property
    def busiest(self) -> tuple[str, float] | None:
        """The approver who took most of the tier's decisions (ties: the first name),
        and their share of them."""
        if not self.by_people:
            return None
        name = min(self.approvers, key=lambda a: (-self.approvers[a].by_people, a))
        return name, self.approvers[name].by_people / self.by_people

    def as_json(self) -> dict[str, Any]:
        busiest = self.busiest
        return super().as_json() | {
            "busiest": None if busiest is None else {"approver": busiest[0], "share": busiest[1]},
            "approvers": {a: f.as_json() for a, f in sorted(self.approvers.items())},
        }


@dataclass
class Report:
    since_ms: int
    now_ms: int
    tiers: dict[str, TierFigures]
    # week 0 is the newest seven days; each week's counts by tier, then outcome
    weeks: list[dict[str, Counter[str]]]

    def as_json(self) -> dict[str, Any]:
        return {
            "since_ms": self.since_ms,
            "now_ms": self.now_ms,
            "reading_floor": {"base_s": READ_BASE_S, "per_line_s": READ_PER_LINE_S},
            "tiers": {t: f.as_json() for t, f in self.tiers.items()},
            "weeks": [
                {
                    "from_ms": self.now_ms - (i + 1) * WEEK_MS,
                    "until_ms": self.now_ms - i * WEEK_MS,
                    "tiers": {t: {o: c[o] for o in OUTCOMES} for t, c in w.items()},
                }
                for i, w in enumerate(self.weeks)
            ],
        }


def report(decisions: Iterable[Decided], *, since_ms: int, now_ms: int) -> Report:
    """The figures of the decisions taken in [since_ms, now_ms], by tier (in the policy's
    order, then any other), by approver within a tier, and by week back from `now_ms`."""
    # A window a few moments over whole weeks (its ends read from two clocks) is not
    # given one more, nearly empty, week: what falls there counts in the oldest.
    n_weeks = max(1, math.ceil((now_ms - since_ms - SLACK_MS) / WEEK_MS))
    tiers: dict[str, TierFigures] = {}
    weeks: list[dict[str, Counter[str]]] = [defaultdict(Counter) for _ in range(n_weeks)]
    for d in sorted(decisions, key=lambda d: (d.at, d.request_id)):
        if not since_ms <= d.at <= now_ms:
            continue
        tier = tiers.setdefault(d.tier, TierFigures())
        tier.add(d)
        if d.outcome in PERSON:
            tier.approvers[d.actor].add(d)
        week = min(n_weeks - 1, (now_ms - d.at) // WEEK_MS)
        weeks[week][d.tier][d.outcome] += 1
    order = {t: i for i, t in enumerate(TIERS)}
    ranked = dict(sorted(tiers.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    return Report(since_ms, now_ms, ranked, weeks)
