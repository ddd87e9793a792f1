"""`hitl-bot maintenance ...`: operator upkeep that reads the whole store by SCAN.

Never run by serve or a worker: each command walks every key of a kind, so it takes as
long as the history is big. Run it once after an upgrade that says so (CHANGELOG.md).
"""

from __future__ import annotations

import typer
from rich.console import Console

from bot.cli import messages as msg
from bot.cli.audit import run_cli
from bot.gate.runtime import Runtime
from bot.store.run.question_upkeep import index_every_question
from bot.store.run.run_upkeep import index_every_request, index_every_run

maintenance_app = typer.Typer(
    no_args_is_help=True,
    help="Operator upkeep that SCANs the whole store (never run by serve).",
    rich_markup_mode=None,
)
out = Console(soft_wrap=True)


@maintenance_app.command(
    "index-questions", short_help="Index and expire questions asked before the run index."
)
def index_questions() -> None:
    """Put every question in its run's index (or, outside any run, its shard's index,
    which retention reads) and give it a TTL, where it lacks them (questions asked before
    either existed). A SCAN over every question; safe to repeat."""
    n = run_cli(lambda rt: index_every_question(rt.questions.redis, now_ms=rt.clock()))
    out.print(msg.MAINT_QUESTIONS_INDEXED.format(n=n), markup=False, highlight=False)


@maintenance_app.command(
    "index-runs", short_help="Rebuild the run indexes that list runs (after an upgrade)."
)
def index_runs() -> None:
    """Put every run in the run indexes (every run, the live ones, each starter's live
    ones) and drop entries naming no run: runs started before the indexes existed, or
    left out by a crash between a run's record and its index; and put every request
    filed under a run in its run's index. A SCAN over every run and every request; safe
    to repeat."""

    async def both(rt: Runtime) -> tuple[int, int]:
        redis = rt.runs.redis
        return await index_every_run(redis), await index_every_request(redis)

    runs, requests = run_cli(both)
    out.print(
        msg.MAINT_RUNS_INDEXED.format(n=runs, requests=requests), markup=False, highlight=False
    )
