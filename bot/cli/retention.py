"""`hitl-bot audit archive`: one retention run by hand (serve runs it every
HITL_RETENTION_CHECK_S, bot/deadlines/retention.py), for an operator who wants the live
store trimmed now or a shorter period once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from bot import messages as msg
from bot.cli.audit import _signer, audit_app, err, out, run_cli
from bot.config import Settings
from bot.core.durations import parse_duration
from bot.gate.runtime import Runtime
from bot.store.retire import Retired
from bot.store.run.runs import RUN_TTL_S

MAX_PASSES = 1000


@audit_app.command("archive", short_help="Move finished history to the archive now.")
def audit_archive(
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than", help="Retire what ended before this long ago (default: HITL_RETENTION)."
        ),
    ] = None,
) -> None:
    """Write what ended more than HITL_RETENTION (or --older-than) ago to the archive
    (signed, append-only segments in HITL_ARCHIVE_DIR) and remove it from the live store.
    `audit verify`, `audit export` and `report` read both."""
    raw = older_than or Settings.load().hitl_retention
    if raw.lower() == "off":
        err.print(msg.RETENTION_OFF, markup=False, highlight=False)
        raise typer.Exit(2)
    try:
        keep = parse_duration(raw)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    signer = _signer()

    async def work(rt: Runtime) -> tuple[Retired, int]:
        retention = rt.retention(signer)
        total = Retired()
        for _ in range(MAX_PASSES):
            got = await retention.pass_once(keep, RUN_TTL_S * 1000)
            total.kept = sorted(set(total.kept) | set(got.kept))
            if got.segment is None:
                break
            total.requests += got.requests
            total.runs += got.runs
            total.questions += got.questions
            total.segment = got.segment
        return total, rt.clock() - keep

    try:
        total, cutoff = run_cli(work)
    except OSError as exc:
        err.print(msg.ARCHIVE_UNWRITABLE.format(path=Settings.load().archive_dir(), error=exc))
        raise typer.Exit(1) from None
    when = datetime.fromtimestamp(cutoff / 1000, UTC).isoformat(timespec="seconds")
    if total.segment is None:
        out.print(msg.RETIRED_NONE.format(cutoff=when), markup=False, highlight=False)
    else:
        out.print(
            msg.RETIRED.format(
                requests=f"{total.requests} {msg.plural(total.requests, 'request')}",
                runs=f"{total.runs} {msg.plural(total.runs, 'run')}",
                questions=f"{total.questions} {msg.plural(total.questions, 'question')}",
                segment=total.segment.parent,
            ),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if total.kept:
        err.print(
            msg.RETIRED_KEPT.format(n=len(total.kept), ids=", ".join(total.kept[:20])),
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
