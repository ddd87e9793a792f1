"""A policy change replayed over recorded requests: what the new policy would do to
each call the old one handled (`hitl-bot policy diff`).

Each recorded call is judged by both policies (bot/core/verdicts.py), and what was
recorded (who decided, how long it waited) says where the change would have
mattered: a call a person decided that the new policy would have let run, or whose
decision came after the new chain would already have applied its default; and a call
that ran without a person that the new policy would send to one. Pure: the store reads
the history (bot/store/figures/history.py), the command prints this.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from bot.core.durations import format_duration
from bot.core.models import RiskTier
from bot.core.pagers import pages
from bot.core.policy import TIER_ORDER, Assignees, Policy, TierPolicy
from bot.core.states import State
from bot.core.verdicts import KINDS, TIMEOUT, Call, Judged, disagreements, judge


class Outcome(StrEnum):
    PERSON = "person"  # a person approved or rejected it
    NO_REVIEW = "no_review"  # the policy let it run: approved at creation
    DEFAULT = "default"  # nobody answered in time: the policy's default applied
    OPEN = "open"  # still waiting for a person
    OTHER = "other"  # withdrawn before anyone decided (the run stopped, a correction)


@dataclass(frozen=True)
class Recorded:
    """One request as the store kept it: the call, and what became of it."""

    id: str
    call: Call
    tier: RiskTier  # the tier it was gated at
    outcome: Outcome
    result: str  # approved, rejected, auto_approved, auto_rejected; else its state
    decided_by: str | None = None
    waited_ms: int | None = None  # from creation to the decision
    edited: bool = False  # a person edited the arguments: replayed with the edited ones


# What the new policy would have done instead (Change.becomes).
BECOMES_NO_REVIEW = "no_review"  # run at once, nobody asked
BECOMES_PERSON = "person"  # sent to a person (or kept before one longer)
# ...or the new tier's default, auto_approved or auto_rejected, its chain run out first


@dataclass(frozen=True)
class Change:
    """A request the new policy would have resolved another way."""

    request_id: str
    tool: str
    requester: str
    created_at: int
    old_tier: RiskTier
    new_tier: RiskTier
    result: str  # what was recorded (Recorded.result)
    decided_by: str | None
    waited_ms: int | None
    becomes: str  # BECOMES_NO_REVIEW, BECOMES_PERSON, or a default state
    why: str  # "review" or "timeout" (verdicts.REVIEW, TIMEOUT)
    new_chain_ms: int


@dataclass(frozen=True)
class TermChange:
    """One field of one tier that the two files set differently."""

    tier: RiskTier
    field: str
    old: str
    new: str


@dataclass
class PolicyDiff:
    requests: int = 0
    tiers: Counter[tuple[RiskTier, RiskTier]] = field(default_factory=Counter)
    review_dropped: int = 0  # sent to a person by the old policy, not by the new
    review_added: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # requests whose terms change
    terms: list[TermChange] = field(default_factory=list)
    to_auto: list[Change] = field(default_factory=list)  # a person decided; would not have
    to_person: list[Change] = field(default_factory=list)  # no person; would have been one
    refused: list[str] = field(default_factory=list)  # their channel, the new one refuses
    # Recorded at a tier or review the old file does not give them: the old file was
    # not the policy in effect when they were made (or a caller raised the tier).
    unlike_recorded: list[str] = field(default_factory=list)


def diff(old: Policy, new: Policy, history: list[Recorded]) -> PolicyDiff:
    """What changes, call by call, from `old` to `new` over `history`."""
    out = PolicyDiff(requests=len(history), terms=term_changes(old, new))
    for rec in history:
        was, now = judge(old, rec.call), judge(new, rec.call)
        out.tiers[(was.tier, now.tier)] += 1
        out.review_dropped += was.review and not now.review
        out.review_added += now.review and not was.review
        out.kinds.update(k for k in disagreements(was, now) if k in KINDS[2:])
        if now.refused:
            out.refused.append(rec.id)
        if was.tier != rec.tier or was.review != (rec.outcome != Outcome.NO_REVIEW):
            out.unlike_recorded.append(rec.id)
        change = _to_auto(rec, was, now) or _to_person(rec, was, now)
        if change is not None:
            (out.to_auto if change.becomes != BECOMES_PERSON else out.to_person).append(change)
    return out


def _change(rec: Recorded, was: Judged, now: Judged, becomes: str, why: str) -> Change:
    return Change(
        request_id=rec.id,
        tool=rec.call.tool,
        requester=rec.call.requester,
        created_at=rec.call.at,
        old_tier=was.tier,
        new_tier=now.tier,
        result=rec.result,
        decided_by=rec.decided_by,
        waited_ms=rec.waited_ms,
        becomes=becomes,
        why=why,
        new_chain_ms=now.chain_ms,
    )


def _to_auto(rec: Recorded, was: Judged, now: Judged) -> Change | None:
    """A person decided it; the new policy would not have asked, or its chain would have
    run out (and its default applied) before the person answered."""
    if rec.outcome != Outcome.PERSON:
        return None
    if not now.review:
        return _change(rec, was, now, BECOMES_NO_REVIEW, "review")
    if rec.waited_ms is not None and rec.waited_ms >= now.chain_ms:
        return _change(rec, was, now, now.default.value, TIMEOUT)
    return None


def _to_person(rec: Recorded, was: Judged, now: Judged) -> Change | None:
    """No person decided it; the new policy would have asked one, or kept it before one
    longer than the old chain that ran out."""
    if not now.review:
        return None
    if rec.outcome == Outcome.NO_REVIEW:
        return _change(rec, was, now, BECOMES_PERSON, "review")
    waited = rec.waited_ms
    if rec.outcome == Outcome.DEFAULT and waited is not None and now.chain_ms > waited:
        return _change(rec, was, now, BECOMES_PERSON, TIMEOUT)
    return None


def _who(a: Assignees) -> str:
    oncall = [f"oncall:{a.oncall}"] if a.oncall else []
    pager = ["pager"] if pages(a) else []
    return ", ".join([*a.users, *a.groups, *a.channels, *oncall, *pager]) or "-"


def _fields(tp: TierPolicy) -> dict[str, str]:
    chain = " -> ".join(
        f"{_who(a)} ({format_duration(a.timeout or tp.review_timeout)})" for a in tp.escalation
    )
    return {
        "review_timeout": format_duration(tp.review_timeout),
        "reviewers": _who(tp.reviewers),
        "escalation": chain or "-",
        "approvers": ", ".join(tp.first_deciders()) or "-",
        "approvals_required": str(tp.approvals_required),
        "on_exhausted": State(tp.on_exhausted).value,
    }


def term_changes(old: Policy, new: Policy) -> list[TermChange]:
    """Every tier field the two files set differently, tier by tier."""
    out = []
    for tier in TIER_ORDER:
        before, after = _fields(old.tiers[tier]), _fields(new.tiers[tier])
        out += [
            TermChange(tier=tier, field=name, old=before[name], new=after[name])
            for name in before
            if before[name] != after[name]
        ]
    return out
