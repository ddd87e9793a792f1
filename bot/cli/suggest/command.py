"""`hitl-bot policy suggest`: the recorded requests read (bot/store/figures/history.py),
mined against the policy in effect (bot/core/suggestions/), printed with their evidence
and effect, and with `--out` written as a policy fragment to review. Nothing is applied.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

from bot.cli.audit import run_cli, since_ms
from bot.cli.suggest import messages as msg
from bot.core.durations import format_duration, parse_duration
from bot.core.policy import Policy, load_policy
from bot.core.policydiff import PolicyDiff
from bot.core.suggestions.bounds import Bound, Unbounded
from bot.core.suggestions.mining import (
    NotSuggested,
    Suggestion,
    Thresholds,
    mine,
)
from bot.errors import HitlError
from bot.messages import when
from bot.store.figures.history import history

out = Console()
err = Console(stderr=True, soft_wrap=True)
INDENT = "     "


def _say(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def _load(path: Path | None) -> tuple[Policy, str]:
    """The policy in effect: --policy, else HITL_POLICY, else the built-in one."""
    chosen = path or os.environ.get("HITL_POLICY") or None
    try:
        return load_policy(chosen, setting=None if path else "HITL_POLICY"), str(
            chosen or "the built-in policy"
        )
    except HitlError as exc:
        err.print(str(exc), markup=False, highlight=False)
        raise typer.Exit(2) from None


def _secs(ms: int | None) -> str:
    return "?" if ms is None else format_duration(max(ms // 1000, 1) * 1000)


def _title(n: int, s: Suggestion) -> str:
    where = (
        msg.STRICTER_ABOVE.format(argument=s.above[0], value=s.above[1])
        if s.above is not None
        else msg.STRICTER_ALL
    )
    p = s.pattern
    return msg.TITLE[s.kind].format(
        n=n, tool=p.tool, requester=p.requester, tier=p.tier.value, new=s.new_tier.value,
        where=where,
    )  # fmt: skip


def _bound(b: Bound) -> str:
    if b.is_range:
        return msg.BOUND_RANGE.format(argument=b.argument, low=b.low, high=b.high)
    return msg.BOUND_VALUES.format(argument=b.argument, values=", ".join(map(str, b.values)))


def _loose(u: Unbounded) -> str:
    return msg.LOOSE_WHY[u.why].format(argument=u.argument)


def _who(pairs: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{name} {n}" for name, n in pairs) or "-"


def _moved(d: PolicyDiff) -> tuple[int, str]:
    moved = {k: n for k, n in d.tiers.items() if k[0] != k[1]}
    tiers = ", ".join(f"{a.value} -> {b.value} {n}" for (a, b), n in sorted(moved.items()))
    return sum(moved.values()), tiers or "-"


def _print(n: int, s: Suggestion) -> None:
    ev = s.evidence
    _say(_title(n, s))
    _say(
        msg.EVIDENCE.format(
            requests=ev.requests, approved=ev.approved, rejected=ev.rejected,
            rejection_rate=f"{ev.rejection_rate:.0%}", edited=ev.edited,
            edit_rate=f"{ev.edit_rate:.0%}", timed_out=ev.timed_out,
            median=_secs(ev.median_ms), deciders=_who(ev.deciders),
        )
    )  # fmt: skip
    if s.bounds:
        _say(msg.BOUNDS.format(bounds="; ".join(map(_bound, s.bounds))))
    if s.loose:
        _say(msg.LOOSE.format(loose=", ".join(map(_loose, s.loose))))
    moved, tiers = _moved(s.effect)
    to_auto, to_person = len(s.effect.to_auto), len(s.effect.to_person)
    _say(msg.EFFECT.format(moved=moved, tiers=tiers, to_auto=to_auto, to_person=to_person))
    _say(msg.MOVED_WHO.format(who=_who(s.moved_requesters)))
    _say(msg.FRAGMENT)
    for line in _yaml({s.pattern.tool: s.fragment}).splitlines():
        _say(INDENT + line)
    _say("")


def _why(r: NotSuggested, th: Thresholds) -> str:
    line = msg.WHY[r.why].format(
        quorum=r.quorum, min=th.min_decisions, median=_secs(r.evidence.median_ms),
        quick=_secs(th.quick_ms), request=r.request_id, actor=r.actor,
    )  # fmt: skip
    p = r.pattern
    return msg.NOT_LINE.format(
        tool=p.tool, requester=p.requester, tier=p.tier.value, decided=r.evidence.decided,
        why=line,
    )  # fmt: skip


def _yaml(tools: dict[str, Any]) -> str:
    return yaml.safe_dump({"tools": tools}, sort_keys=False, allow_unicode=True)


def _write(path: Path, made: list[Suggestion], since_arg: str, n: int) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = msg.OUT_HEAD.format(since_arg=since_arg, now=now, n=n)
    tools: dict[str, Any] = {}
    for i, s in enumerate(made, 1):
        if s.pattern.tool in tools:
            text += msg.OUT_SKIPPED.format(tool=s.pattern.tool)
            continue
        text += msg.OUT_ITEM.format(title=_title(i, s))
        tools[s.pattern.tool] = s.fragment
    path.write_text(text + _yaml(tools))


def _json(made: list[Suggestion], refused: list[NotSuggested], n: int) -> dict[str, Any]:
    def effect(d: PolicyDiff) -> dict[str, Any]:
        return {
            "requests": d.requests,
            "tiers": [
                {"old": a.value, "new": b.value, "requests": c} for (a, b), c in d.tiers.items()
            ],
            "review": {"dropped": d.review_dropped, "added": d.review_added},
            "to_auto": [c.request_id for c in d.to_auto],
            "to_person": [c.request_id for c in d.to_person],
        }

    def ev(s: Suggestion | NotSuggested) -> dict[str, Any]:
        e = s.evidence
        return asdict(e) | {"rejection_rate": e.rejection_rate, "edit_rate": e.edit_rate}

    return {
        "requests": n,
        "suggestions": [
            {
                "kind": s.kind.value,
                "tool": s.pattern.tool,
                "requester": s.pattern.requester,
                "tier": s.pattern.tier.value,
                "new_tier": s.new_tier.value,
                "bounds": [asdict(b) for b in s.bounds],
                "loose": [asdict(u) for u in s.loose],
                "above": list(s.above) if s.above else None,
                "evidence": ev(s),
                "effect": effect(s.effect),
                "moved_requesters": dict(s.moved_requesters),
                "fragment": {"tools": {s.pattern.tool: s.fragment}},
            }
            for s in made
        ],
        "not_suggested": [
            {
                "tool": r.pattern.tool,
                "requester": r.pattern.requester,
                "tier": r.pattern.tier.value,
                "why": r.why.value,
                "request_id": r.request_id,
                "actor": r.actor,
                "evidence": ev(r),
            }
            for r in refused
        ],
    }


def _duration(value: str) -> int:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def policy_suggest(
    since: Annotated[
        str, typer.Option("--since", help="How far back: a duration (30d, 7d) or an ISO date.")
    ] = "30d",
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            help="The policy in effect (default: HITL_POLICY, else the built-in policy).",
        ),
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="Write the suggestions as a policy fragment to review."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Say why each other pattern got no suggestion.")
    ] = False,
    min_decisions: Annotated[
        int, typer.Option("--min", min=1, help="Decisions a pattern needs before it counts.")
    ] = Thresholds.min_decisions,
    quick: Annotated[
        str, typer.Option("--quick", help="The median time to decide that counts as quick.")
    ] = "1m",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Mine the requests recorded since --since for policy changes: calls people always
    approve quickly, offered less review inside bounds read from what they approved;
    calls people often reject or edit, offered a stricter tier. Each with its evidence
    and its effect as `policy diff` replays it. Nothing is applied."""
    current, name = _load(policy)
    th = Thresholds(min_decisions=min_decisions, quick_ms=_duration(quick))
    start = since_ms(since)
    found = run_cli(lambda rt: history(rt.requests, start))
    made, refused = mine(current, found, th)
    if out_file is not None:
        _write(out_file, made, since, len(found))
    if as_json:
        print(json.dumps(_json(made, refused, len(found)), indent=2, ensure_ascii=False))
        return
    if not found:
        _say(msg.EMPTY.format(since=when(start)[:16] + " UTC"))
        return
    _say(
        msg.HEAD.format(
            n=len(found), since=when(start)[:16] + " UTC", policy=name, made=len(made),
            refused=len(refused),
        )
    )  # fmt: skip
    _say("")
    for i, s in enumerate(made, 1):
        _print(i, s)
    if not made:
        _say(msg.NONE_MADE)
    if explain and refused:
        _say(msg.NOT_TITLE.format(n=len(refused)))
        for r in refused:
            _say(_why(r, th))
    elif refused:
        _say(msg.EXPLAIN_HINT.format(n=len(refused)))
    if out_file is not None and made:
        _say(msg.WROTE.format(n=len({s.pattern.tool for s in made}), path=out_file))
