"""What the operators' App Home shows of the policy suggestions: a compact record of one
mining of the last 30 days (mining.py), kept by serve's hourly check
(bot/slack/nudges/suggested.py) so the tab reads it in one round trip instead of
mining on every open.

It holds the top few suggestions, each with what it changes, its evidence and its
effect, the count of all of them, when it was mined, and the commands that write the
fragment to review and apply it. A pydantic model, so a damaged record fails to load
as a whole rather than half-showing. Pure: the record is made here, kept by the store.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from bot.core.models import RiskTier
from bot.core.suggestions.mining import Kind, Suggestion

SHOWN = 3  # suggestions the App Home lists; `hitl-bot policy suggest` prints them all
WINDOW = "30d"  # as the commands below say it
WINDOW_MS = 30 * 86_400_000
MINED_EVERY_MS = 3_600_000  # at most once an hour, however often the fatigue check runs
FRAGMENT_FILE = "fragment.yml"

# Exactly what an operator runs: the first writes every suggestion as one fragment to
# review (the App Home applies nothing), the second merges what they kept, audited.
SUGGEST_COMMAND = f"hitl-bot policy suggest --since {WINDOW} --out {FRAGMENT_FILE}"
APPLY_COMMAND = f"hitl-bot policy apply {FRAGMENT_FILE} --by NAME"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BoundNote(_Frozen):
    """One bound of the calls a suggestion covers: a range, or the values seen."""

    argument: str
    low: int | float | None = None
    high: int | float | None = None
    values: tuple[str | bool, ...] = ()


class Brief(_Frozen):
    """One suggestion, as the App Home says it."""

    kind: Kind
    tool: str
    requester: str
    tier: RiskTier
    new_tier: RiskTier
    above: tuple[str, int | float] | None = None  # stricter from this amount up
    bounds: tuple[BoundNote, ...] = ()
    loose: tuple[str, ...] = ()  # arguments no rule can hold: read before applying
    # the evidence: the pattern's recorded requests and what became of them
    requests: int
    approved: int
    rejected: int
    edited: int
    timed_out: int
    median_ms: int | None
    # the effect, as `policy diff` replays the change over the tool's recorded calls
    moved: int
    tiers: tuple[tuple[RiskTier, RiskTier, int], ...]  # old tier, new tier, requests
    to_auto: int  # decided by a person, would have gone without one
    to_person: int  # went without a person, would have gone to one


class Summary(_Frozen):
    """One mining, as kept for the App Home."""

    computed_at: int  # epoch ms, by serve's clock
    since_ms: int  # the first request the window holds
    requests: int  # requests mined
    total: int  # suggestions made; `shown` holds the first few
    shown: tuple[Brief, ...]
    commands: tuple[str, ...]


def brief(s: Suggestion) -> Brief:
    ev, effect = s.evidence, s.effect
    moved = tuple((a, b, n) for (a, b), n in sorted(effect.tiers.items()) if a != b)
    bounds = tuple(
        BoundNote(argument=b.argument, low=b.low, high=b.high, values=b.values) for b in s.bounds
    )
    return Brief(
        kind=s.kind,
        tool=s.pattern.tool,
        requester=s.pattern.requester,
        tier=s.pattern.tier,
        new_tier=s.new_tier,
        above=s.above,
        bounds=bounds,
        loose=tuple(u.argument for u in s.loose),
        requests=ev.requests,
        approved=ev.approved,
        rejected=ev.rejected,
        edited=ev.edited,
        timed_out=ev.timed_out,
        median_ms=ev.median_ms,
        moved=sum(n for *_, n in moved),
        tiers=moved,
        to_auto=len(effect.to_auto),
        to_person=len(effect.to_person),
    )


def summarize(
    made: Sequence[Suggestion], requests: int, now_ms: int, since_ms: int, top: int = SHOWN
) -> Summary:
    """The record of one mining: `made` in the order mining ranked them (most requests
    first), the first `top` of them in full."""
    return Summary(
        computed_at=now_ms,
        since_ms=since_ms,
        requests=requests,
        total=len(made),
        shown=tuple(brief(s) for s in made[:top]),
        commands=(SUGGEST_COMMAND, APPLY_COMMAND),
    )
