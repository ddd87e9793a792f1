"""`hitl-bot report --since 7d [--html FILE]`: the approval-fatigue figures
(bot/core/hindsight/fatigue.py) as tables, as JSON, and as a self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bot.cli import messages as m
from bot.cli.audit import archived, run_cli, say_archive_problems, since_ms
from bot.cli.report_html import page
from bot.core.hindsight.fatigue import OUTCOMES, READ_BASE_S, READ_PER_LINE_S, WEEK_MS, Report
from bot.gate.runtime import Runtime
from bot.store.figures import fatigue

out = Console()
WIDE = 10_000  # piped, a table is as wide as its cells: names are never cut
Rows = list[tuple[str, ...]]


def tier_rows(r: Report, names: dict[str, str] | None = None) -> Rows:
    rows: Rows = []
    for tier, f in r.tiers.items():
        top = f.busiest
        rows.append(
            (
                tier,
                str(f.by_people),
                m.share(f.rate("approved")),
                m.share(f.rate("rejected")),
                m.seconds(f.median),
                m.seconds(f.p90),
                m.too_fast(f.too_fast, f.by_people),
                m.NONE if top is None else m.busiest(m.named(top[0], names or {}), top[1]),
                str(f.outcomes["auto_approved"]),
                str(f.outcomes["auto_rejected"]),
                str(f.outcomes["no_review"]),
            )
        )
    return rows


def approver_rows(r: Report, names: dict[str, str] | None = None) -> Rows:
    rows: Rows = []
    for tier, t in r.tiers.items():
        ranked = sorted(t.approvers.items(), key=lambda kv: (-kv[1].by_people, kv[0]))
        for name, f in ranked:
            rows.append(
                (
                    tier,
                    m.named(name, names or {}),
                    str(f.by_people),
                    m.share(f.rate("approved")),
                    m.seconds(f.median),
                    m.seconds(f.p90),
                    m.too_fast(f.too_fast, f.by_people),
                )
            )
    return rows


def week_rows(r: Report) -> Rows:
    rows: Rows = []
    for i, week in enumerate(r.weeks):
        start = max(r.since_ms, r.now_ms - (i + 1) * WEEK_MS)
        label = m.span(m.day(start), m.day(r.now_ms - i * WEEK_MS))
        for tier, c in sorted(week.items()):
            rows.append((label, tier, *(str(c[o]) for o in OUTCOMES)))
    return rows


def _table(title: str, columns: tuple[str, ...], rows: Rows) -> Table:
    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i < 2 else "right")
    for row in rows:
        t.add_row(*row, style=None)
    return t


def print_report(r: Report, names: dict[str, str]) -> None:
    con = out if out.is_terminal else Console(width=WIDE)
    con.print(m.window(m.day(r.since_ms), m.day(r.now_ms)), highlight=False, markup=False)
    if not r.tiers:
        none = m.REPORT_NONE.format(since=m.day(r.since_ms), until=m.day(r.now_ms))
        con.print(none, markup=False)
        return
    con.print(_table(m.REPORT_TITLE, m.TIER_COLUMNS, tier_rows(r, names)))
    con.print(_table("", m.APPROVER_COLUMNS, approver_rows(r, names)))
    con.print(_table("", m.WEEK_COLUMNS, week_rows(r)))
    floor = m.REPORT_FLOOR.format(base=READ_BASE_S, per_line=READ_PER_LINE_S)
    con.print(floor, highlight=False, markup=False)


def report(
    since: Annotated[str, typer.Option(help="A duration back from now ('7d') or a date.")] = "7d",
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write a page with charts to FILE.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Approval fatigue by tier and approver: time from card to decision, decisions too
    fast to have read the card, the busiest approver's share, outcomes by week."""

    async def work(rt: Runtime) -> tuple[Report, dict[str, str], list[str]]:
        found = await archived(rt)  # what retention moved out counts too
        live = set(await rt.requests.ids_between())
        kept = [rec for rec in found.requests() if rec["id"] not in live]
        r = await fatigue.figures(rt.requests, since_ms(since), rt.clock(), archived_records=kept)
        # Names as Slack shows them, where serve looked them up (the JSON keeps the ids).
        names = await rt.slack.names(a for t in r.tiers.values() for a in t.approvers)
        return r, names, found.problems

    r, names, problems = run_cli(work)
    if as_json:
        print(json.dumps(r.as_json(), indent=2, sort_keys=True))
    else:
        print_report(r, names)
    if html is not None:
        rows = tier_rows(r, names), approver_rows(r, names), week_rows(r)
        html.write_text(page(r, *rows), encoding="utf-8")
        if not as_json:
            out.print(m.REPORT_WROTE.format(path=html), highlight=False, markup=False)
    if problems:  # figures without part of the archive: said, and not a success
        say_archive_problems(problems)
        raise typer.Exit(1)
