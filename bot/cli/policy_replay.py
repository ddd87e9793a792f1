"""`hitl-bot policy diff OLD NEW` and `hitl-bot policy shadow-report`: what a policy
change would do, shown on the requests the store recorded. The comparison is pure
(bot/core/policydiff.py), the history is read by bot/store/figures/history.py; this prints."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.cli import messages as msg
from bot.cli.audit import run_cli, since_ms
from bot.core.durations import format_duration
from bot.core.models import RiskTier
from bot.core.policy import TIER_ORDER, Policy, load_policy
from bot.core.policydiff import (
    BECOMES_NO_REVIEW,
    BECOMES_PERSON,
    Change,
    PolicyDiff,
    diff,
)
from bot.errors import HitlError
from bot.messages import when
from bot.store.figures.history import Shadowed, history, shadowed

out = Console()
err = Console(stderr=True, soft_wrap=True)  # an error names a path: never split it
WIDE = 10_000  # piped, a table is as wide as its cells: ids are never cut
IDS_SHOWN = 10  # request ids named in a one-line note

SinceOpt = Annotated[
    str, typer.Option("--since", help="How far back: a duration (7d, 24h) or an ISO date.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _row(t: Table, *cells: str) -> None:
    """Cells as plain text: a tool or requester name is never read as Rich markup."""
    t.add_row(*(Text(c) for c in cells))


def _print(t: Table) -> None:
    (out if out.is_terminal else Console(width=WIDE)).print(t)
    out.print()  # a blank line before the next part


def _say(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def _load(path: Path) -> Policy:
    """The policy file, or exit 2 with every problem, each naming the file."""
    try:
        return load_policy(path, setting=None)
    except HitlError as exc:
        err.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _since(ms: int) -> str:
    return when(ms)[:16] + " UTC"


def _ids(ids: list[str]) -> str:
    more = f" and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else ""
    return ", ".join(ids[:IDS_SHOWN]) + more


def _waited(ms: int | None) -> str:
    return "?" if ms is None else format_duration(max(ms // 1000, 1) * 1000)


def _was(c: Change) -> str:
    if c.decided_by is not None:
        return msg.DIFF_WAS_PERSON.format(
            result=c.result, who=c.decided_by, waited=_waited(c.waited_ms)
        )
    if c.why == "review":
        return msg.DIFF_WAS_AUTO.format(result=c.result)
    return msg.DIFF_WAS_DEFAULT.format(result=c.result, waited=_waited(c.waited_ms))


def _becomes(c: Change) -> str:
    chain = format_duration(c.new_chain_ms)
    if c.becomes == BECOMES_NO_REVIEW:
        return msg.DIFF_BECOMES_NO_REVIEW
    if c.becomes == BECOMES_PERSON:
        return msg.DIFF_LONGER.format(chain=chain) if c.why != "review" else msg.DIFF_BECOMES_PERSON
    return msg.DIFF_BECOMES_DEFAULT.format(default=c.becomes, chain=chain)


def _changes(changes: list[Change]) -> Table:
    t = Table("request", "tool", "requester", "made", "tier old -> new", "recorded", "new policy")
    for c in changes:
        _row(
            t,
            c.request_id,
            c.tool,
            c.requester,
            when(c.created_at)[:16],
            f"{c.old_tier.value} -> {c.new_tier.value}",
            _was(c),
            _becomes(c),
        )
    return t


def _tier_order(item: tuple[tuple[RiskTier, RiskTier], int]) -> tuple[int, int]:
    (a, b), _ = item
    return TIER_ORDER.index(a), TIER_ORDER.index(b)


def _print_diff(d: PolicyDiff, old: Path, new: Path, since: str) -> None:
    _say(msg.DIFF_HEAD.format(n=d.requests, since=since, old=old, new=new))
    tiers = Table("old tier", "new tier", "requests")
    for (a, b), n in sorted(d.tiers.items(), key=_tier_order):
        _row(tiers, a.value, b.value if b != a else f"{b.value} (same)", str(n))
    _say(msg.DIFF_TIERS)
    _print(tiers)
    _say(msg.DIFF_REVIEW.format(dropped=d.review_dropped, added=d.review_added))
    if d.terms:
        _say(msg.DIFF_TERMS)
        terms = Table("tier", "field", "old", "new")
        for tc in d.terms:
            _row(terms, tc.tier.value, tc.field, tc.old, tc.new)
        _print(terms)
    else:
        _say(msg.DIFF_NO_TERMS)
    if d.kinds:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(d.kinds.items()))
        _say(msg.DIFF_KINDS.format(kinds=kinds))
    if d.to_auto:
        _say(msg.DIFF_TO_AUTO.format(n=len(d.to_auto)))
        _print(_changes(d.to_auto))
    if d.to_person:
        _say(msg.DIFF_TO_PERSON.format(n=len(d.to_person)))
        _print(_changes(d.to_person))
    if not d.to_auto and not d.to_person:
        _say(msg.DIFF_NONE_MOVED)
    if d.refused:
        _say(msg.DIFF_REFUSED.format(n=len(d.refused), ids=_ids(d.refused)))
    if d.unlike_recorded:
        _say(msg.DIFF_UNLIKE.format(n=len(d.unlike_recorded), ids=_ids(d.unlike_recorded)))


def diff_json(d: PolicyDiff, old: Path, new: Path, since_ms: int) -> dict[str, Any]:
    return {
        "old": str(old),
        "new": str(new),
        "since": since_ms,
        "requests": d.requests,
        "tiers": [
            {"old": a.value, "new": b.value, "requests": n}
            for (a, b), n in sorted(d.tiers.items(), key=_tier_order)
        ],
        "review": {"dropped": d.review_dropped, "added": d.review_added},
        "kinds": dict(sorted(d.kinds.items())),
        "terms": [asdict(tc) for tc in d.terms],
        "to_auto": [asdict(c) for c in d.to_auto],
        "to_person": [asdict(c) for c in d.to_person],
        "refused": d.refused,
        "unlike_recorded": d.unlike_recorded,
    }


def policy_diff(
    old: Annotated[Path, typer.Argument(metavar="OLD", help="The policy in effect.")],
    new: Annotated[Path, typer.Argument(metavar="NEW", help="The policy you consider.")],
    since: SinceOpt = "7d",
    as_json: JsonOpt = False,
) -> None:
    """Replay the requests recorded since --since through OLD and NEW: which change tier,
    review, reviewers, approvers or default, and which a person decided that NEW would
    have resolved without one (and the reverse)."""
    before, after = _load(old), _load(new)
    start = since_ms(since)
    found = run_cli(lambda rt: history(rt.requests, start))
    d = diff(before, after, found)
    if as_json:
        print(json.dumps(diff_json(d, old, new, start), indent=2, ensure_ascii=False))
    elif not found:
        _say(msg.DIFF_EMPTY.format(since=_since(start)))
    else:
        _print_diff(d, old, new, _since(start))


def _verdict(tier: str, review: bool) -> str:
    return tier if review else f"{tier}, review: none"


def _shadow_json(found: list[Shadowed]) -> list[dict[str, Any]]:
    return [
        {
            "request_id": s.id,
            "tool": s.tool,
            "requester": s.requester,
            "created_at": s.created_at,
            "real": {"tier": s.tier.value, "review": s.review},
            "shadow": {"tier": s.shadow.tier.value, "review": s.shadow.review},
            "differs": list(s.shadow.differs),
        }
        for s in found
    ]


def shadow_report(since: SinceOpt = "7d", as_json: JsonOpt = False) -> None:
    """The requests the shadow policy (HITL_SHADOW_POLICY) would have treated otherwise
    than the policy in effect, since --since, and how."""
    start = since_ms(since)
    found = run_cli(lambda rt: shadowed(rt.requests, start))
    differ = [s for s in found if s.shadow.differs]
    if as_json:
        body = {"since": start, "judged": len(found), "disagreements": _shadow_json(differ)}
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return
    at = _since(start)
    if not found:
        _say(msg.SHADOW_NONE.format(since=at))
        return
    _say(msg.SHADOW_HEAD.format(n=len(found), since=at, m=len(differ)))
    if not differ:
        _say(msg.SHADOW_AGREE)
        return
    totals: dict[tuple[str, str], int] = {}
    for s in differ:
        for kind in s.shadow.differs:
            totals[(s.tool, kind)] = totals.get((s.tool, kind), 0) + 1
    by_kind = Table("tool", "kind", "requests")
    for (tool, kind), n in sorted(totals.items()):
        _row(by_kind, tool, kind, str(n))
    _say(msg.SHADOW_BY_KIND)
    _print(by_kind)
    t = Table("request", "made", "tool", "requester", "real", "shadow", "differs")
    for s in differ:
        _row(
            t,
            s.id,
            when(s.created_at)[:16],
            s.tool,
            s.requester,
            _verdict(s.tier.value, s.review),
            _verdict(s.shadow.tier.value, s.shadow.review),
            ", ".join(s.shadow.differs),
        )
    _print(t)
