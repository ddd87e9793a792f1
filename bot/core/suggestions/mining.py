"""Where people could stop clicking, and where they should look harder: suggestions
mined from the recorded requests, each a change to one tool's entry in the policy.

A pattern is one tool, one requester, one tier (as the policy in effect judges the
call). Where people decided enough of its calls:

- most of them rejected or edited (`strict_share`): a stricter rule, one tier up for
  the calls at or above the smallest amount people turned down, or for all of them;
- otherwise, the calls people approved as asked, quickly (median within `quick_ms`),
  give bounds (bounds.py), and inside them the calls are offered less review: at
  `medium`, none (the policy approves them, audited: a standing default); at `high`,
  the `medium` tier. Outside the bounds a rule keeps today's tier.

Never for `critical`, never where the tier needs more than one approval, and never
where any recorded call of the tool that the change would move was rejected, edited,
or left to time out: the policy names tools, not requesters, so a suggestion covers
every requester's calls inside its bounds, and all of them are its evidence. A pattern
left without a suggestion says why (`NotSuggested`). Each suggestion carries its
effect as `policy diff` computes it (bot/core/hindsight/policydiff.py). Pure: nothing is read or
changed here; the command prints and writes what this returns.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.core.hindsight.fatigue import percentile
from bot.core.hindsight.policydiff import Outcome, PolicyDiff, Recorded, diff
from bot.core.hindsight.verdicts import Judged, judge
from bot.core.models import RiskTier
from bot.core.policy import TIER_ORDER, Policy, ToolPolicy
from bot.core.suggestions.bounds import Bound, Unbounded, bounds_of


class Kind(StrEnum):
    NO_REVIEW = "no_review"  # inside the bounds, the policy approves without a person
    LOWER_TIER = "lower_tier"  # inside the bounds, reviewed one tier lower
    STRICTER = "stricter"  # one tier up: above an amount, or every call


class Why(StrEnum):
    """Why a pattern people decided got no suggestion."""

    CRITICAL = "critical"  # decided one at a time, never suggested away
    QUORUM = "quorum"  # the tier needs several approvals: no rule stands for them
    TOO_FEW = "too_few"  # fewer decisions than `min_decisions`
    SLOW = "slow"  # people take their time over it: they read it
    LOWEST = "lowest"  # already low: the policy cannot exempt part of a low tool
    RAISED = "raised"  # a rule or the caller raised it: the tool's own tier is another
    NO_BOUND = "no_bound"  # it has arguments and none can be bounded
    REJECTED_INSIDE = "rejected_inside"  # a call inside the bounds was rejected
    EDITED_INSIDE = "edited_inside"  # a call inside the bounds was edited before approval
    TIMED_OUT_INSIDE = "timed_out_inside"  # a call inside the bounds was left to time out


@dataclass(frozen=True)
class Thresholds:
    min_decisions: int = 20
    quick_ms: int = 60_000
    strict_share: float = 0.25


@dataclass(frozen=True)
class Pattern:
    tool: str
    requester: str
    tier: RiskTier  # as the policy in effect judges the calls


@dataclass(frozen=True)
class Evidence:
    requests: int
    approved: int  # by a person, as asked
    rejected: int
    edited: int  # approved after a person changed the arguments
    timed_out: int  # nobody answered: the tier's default applied
    median_ms: int | None  # from creation to a person's decision
    deciders: tuple[tuple[str, int], ...]  # who decided, most first

    @property
    def decided(self) -> int:
        return self.approved + self.rejected + self.edited

    @property
    def rejection_rate(self) -> float:
        return self.rejected / self.decided if self.decided else 0.0

    @property
    def edit_rate(self) -> float:
        return self.edited / self.decided if self.decided else 0.0


@dataclass(frozen=True)
class Suggestion:
    kind: Kind
    pattern: Pattern
    evidence: Evidence
    new_tier: RiskTier  # inside the bounds (or above `above`, for a stricter one)
    fragment: dict[str, Any]  # the tool's whole entry under `tools:`, as YAML writes it
    effect: PolicyDiff  # the change replayed over the tool's recorded calls
    bounds: tuple[Bound, ...] = ()
    loose: tuple[Unbounded, ...] = ()
    moved_requesters: tuple[tuple[str, int], ...] = ()  # whose recorded calls it moves
    above: tuple[str, int | float] | None = None  # stricter from this amount up


@dataclass(frozen=True)
class NotSuggested:
    pattern: Pattern
    evidence: Evidence
    why: Why
    request_id: str | None = None  # the call that stopped it
    actor: str | None = None  # who decided that call
    quorum: int = 1


def _approved(r: Recorded) -> bool:
    return r.outcome == Outcome.PERSON and r.result == "approved" and not r.edited


def _rejected(r: Recorded) -> bool:
    return r.outcome == Outcome.PERSON and r.result == "rejected"


def _edited(r: Recorded) -> bool:
    return r.outcome == Outcome.PERSON and r.edited


def _timed_out(r: Recorded) -> bool:
    return r.outcome == Outcome.DEFAULT


def evidence(recs: list[Recorded]) -> Evidence:
    people = [r for r in recs if r.outcome == Outcome.PERSON]
    waits = [float(r.waited_ms) for r in people if r.waited_ms is not None]
    median = percentile(waits, 0.5)
    who = Counter(r.decided_by for r in people if r.decided_by)
    return Evidence(
        requests=len(recs),
        approved=sum(map(_approved, recs)),
        rejected=sum(map(_rejected, recs)),
        edited=sum(map(_edited, recs)),
        timed_out=sum(map(_timed_out, recs)),
        median_ms=None if median is None else int(median),
        deciders=tuple(sorted(who.items(), key=lambda kv: (-kv[1], kv[0]))),
    )


def _entry(policy: Policy, tool: str) -> ToolPolicy:
    return policy.tools.get(tool) or ToolPolicy()


def _rules(tp: ToolPolicy) -> list[dict[str, str]]:
    return [{"if": r.condition, "tier": r.tier.value} for r in tp.rules]


def _with(policy: Policy, tool: str, fragment: dict[str, Any]) -> Policy:
    entry = ToolPolicy.model_validate(fragment)
    return policy.model_copy(update={"tools": {**policy.tools, tool: entry}})


class _Miner:
    def __init__(self, policy: Policy, history: list[Recorded], th: Thresholds) -> None:
        self.policy, self.history, self.th = policy, history, th
        self.judged: dict[str, Judged] = {r.id: judge(policy, r.call) for r in history}

    def patterns(self) -> dict[Pattern, list[Recorded]]:
        groups: dict[Pattern, list[Recorded]] = defaultdict(list)
        for r in self.history:
            groups[Pattern(r.call.tool, r.call.requester, self.judged[r.id].tier)].append(r)
        decided = {p: recs for p, recs in groups.items() if evidence(recs).decided}
        return dict(
            sorted(decided.items(), key=lambda kv: (-len(kv[1]), kv[0].tool, kv[0].requester))
        )

    def _tool_calls(self, tool: str) -> list[Recorded]:
        return [r for r in self.history if r.call.tool == tool]

    def _moved(self, candidate: Policy, calls: list[Recorded]) -> list[Recorded]:
        """The calls `candidate` would judge otherwise than the policy in effect."""
        out = []
        for r in calls:
            was, now = self.judged[r.id], judge(candidate, r.call)
            if (was.tier, was.review) != (now.tier, now.review):
                out.append(r)
        return out

    def quorum(self, recs: list[Recorded]) -> int:
        """The most approvals any of these calls needs under the policy in effect."""
        return max(self.judged[r.id].quorum for r in recs)

    def relax(self, p: Pattern, recs: list[Recorded], ev: Evidence) -> Suggestion | NotSuggested:
        base = [r for r in recs if _approved(r)]
        if len(base) < self.th.min_decisions:
            return NotSuggested(p, ev, Why.TOO_FEW)
        median = percentile([float(r.waited_ms or 0) for r in base], 0.5) or 0
        if median > self.th.quick_ms:
            return NotSuggested(p, ev, Why.SLOW)
        tp = _entry(self.policy, p.tool)
        if p.tier != (tp.tier or self.policy.default_tier):
            return NotSuggested(p, ev, Why.RAISED)
        if p.tier == RiskTier.LOW:
            return NotSuggested(p, ev, Why.LOWEST)
        bounds, loose = bounds_of([r.call.args for r in base])
        if loose and not bounds:
            return NotSuggested(p, ev, Why.NO_BOUND)
        kind = Kind.NO_REVIEW if p.tier == RiskTier.MEDIUM else Kind.LOWER_TIER
        new_tier = TIER_ORDER[TIER_ORDER.index(p.tier) - 1]
        fragment: dict[str, Any] = {"tier": new_tier.value}
        if kind == Kind.NO_REVIEW:
            fragment["review"] = "none"
        fragment["rules"] = [rule for b in bounds for rule in b.rules(p.tier)] + _rules(tp)
        candidate = _with(self.policy, p.tool, fragment)
        calls = self._tool_calls(p.tool)
        moved = self._moved(candidate, calls)
        for r in sorted(moved, key=lambda r: (r.call.at, r.id)):
            why = (
                Why.REJECTED_INSIDE if _rejected(r)
                else Why.EDITED_INSIDE if _edited(r)
                else Why.TIMED_OUT_INSIDE if _timed_out(r)
                else None
            )  # fmt: skip
            if why is not None:
                return NotSuggested(p, ev, why, request_id=r.id, actor=r.decided_by)
        # Every approved call the bounds came from must lie inside them; a value a rule
        # reads otherwise than it was recorded would leave one out: offer nothing then.
        if not {r.id for r in base} <= {r.id for r in moved}:
            return NotSuggested(p, ev, Why.NO_BOUND)
        who = Counter(r.call.requester for r in moved)
        return Suggestion(
            kind=kind,
            pattern=p,
            evidence=ev,
            new_tier=new_tier,
            fragment=fragment,
            effect=diff(self.policy, candidate, calls),
            bounds=tuple(bounds),
            loose=tuple(loose),
            moved_requesters=tuple(sorted(who.items(), key=lambda kv: (-kv[1], kv[0]))),
        )

    def stricter(self, p: Pattern, recs: list[Recorded], ev: Evidence) -> Suggestion | NotSuggested:
        up = TIER_ORDER[TIER_ORDER.index(p.tier) + 1]
        tp = _entry(self.policy, p.tool)
        above = _threshold(recs)
        fragment: dict[str, Any] = {"tier": (tp.tier or self.policy.default_tier).value}
        if tp.review != "required":
            fragment["review"] = tp.review
        rules = _rules(tp)
        if above is not None:
            rules = [{"if": f"{above[0]} >= {above[1]!r}", "tier": up.value}, *rules]
        elif p.tier != (tp.tier or self.policy.default_tier):
            return NotSuggested(p, ev, Why.RAISED)
        else:
            fragment["tier"] = up.value
        if rules:
            fragment["rules"] = rules
        candidate = _with(self.policy, p.tool, fragment)
        calls = self._tool_calls(p.tool)
        who = Counter(r.call.requester for r in self._moved(candidate, calls))
        return Suggestion(
            kind=Kind.STRICTER,
            pattern=p,
            evidence=ev,
            new_tier=up,
            fragment=fragment,
            effect=diff(self.policy, candidate, calls),
            moved_requesters=tuple(sorted(who.items(), key=lambda kv: (-kv[1], kv[0]))),
            above=above,
        )


def _threshold(recs: list[Recorded]) -> tuple[str, int | float] | None:
    """The numeric argument whose smallest rejected-or-edited value spares the most
    calls approved as asked below it, with that value; None if none spares any."""
    bad = [r.call.args for r in recs if _rejected(r) or _edited(r)]
    good = [r.call.args for r in recs if _approved(r)]
    best: tuple[int, str, int | float] | None = None
    for name in sorted({n for args in bad for n in args}):
        values = [a.get(name) for a in bad]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            continue
        if not all(name in a for a in good):
            continue
        low = min(v for v in values if isinstance(v, int | float))
        spared = sum(1 for a in good if isinstance(a[name], int | float) and a[name] < low)
        if spared and (best is None or spared > best[0]):
            best = (spared, name, low)
    return None if best is None else (best[1], best[2])


def mine(
    policy: Policy, history: list[Recorded], th: Thresholds = Thresholds()
) -> tuple[list[Suggestion], list[NotSuggested]]:
    """The suggestions for `policy` that `history` supports, and every pattern people
    decided that got none, with why; both most requests first."""
    miner = _Miner(policy, history, th)
    made: list[Suggestion] = []
    refused: list[NotSuggested] = []
    for p, recs in miner.patterns().items():
        ev = evidence(recs)
        got: Suggestion | NotSuggested
        if p.tier == RiskTier.CRITICAL:
            got = NotSuggested(p, ev, Why.CRITICAL)
        elif (quorum := miner.quorum(recs)) > 1:  # neither less review nor a stricter rule
            got = NotSuggested(p, ev, Why.QUORUM, quorum=quorum)
        elif ev.decided < th.min_decisions:
            got = NotSuggested(p, ev, Why.TOO_FEW)
        elif (ev.rejected + ev.edited) / ev.decided >= th.strict_share:
            got = miner.stricter(p, recs, ev)
        else:
            got = miner.relax(p, recs, ev)
        if isinstance(got, Suggestion):
            made.append(got)
        else:
            refused.append(got)
    return made, refused
