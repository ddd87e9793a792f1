"""`hitl-bot audit verify | export | heads`.

`audit verify` checks every chain's links and every decision's seal (bot/core/proof/seal.py)
against the keys an executor would trust; with `--heads FILE` also a heads file that
`audit heads` signed earlier, so a history rewritten with every link recomputed, cut
short or deleted is named too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from bot.cli import messages as cli_msg
from bot.config import Settings
from bot.core.durations import parse_duration
from bot.errors import HitlError
from bot.gate.grant_audit import grant_findings
from bot.gate.runtime import Runtime, open_runtime
from bot.gate.stepup_audit import stepup_findings
from bot.logs import setup as setup_logging
from bot.signing import Signer, load_signer, require_public_keys
from bot.store import archive, archive_audit, audit, heads
from bot.store.archive import Archive

audit_app = typer.Typer(
    no_args_is_help=True, help="Verify and export the audit trail.", rich_markup_mode=None
)
out = Console()
err = Console(stderr=True)
T = TypeVar("T")
Since = Annotated[str | None, typer.Option(help="ISO date or '24h'")]


def run_cli(work: Callable[[Runtime], Awaitable[T]]) -> T:
    # Warnings (an unsafe Redis, a slow store) go to stderr as JSON lines, as in `serve`;
    # the command's own answer stays on stdout, for people and pipes.
    setup_logging(logging.WARNING)

    async def main() -> T:
        async with open_runtime() as rt:
            return await work(rt)

    try:
        return asyncio.run(main())
    except HitlError as exc:
        err.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None


def since_ms(value: str | None) -> int:
    """'2026-11-01', an ISO time, or a duration back from now ('24h')."""
    if not value:
        return 0
    try:
        return int(datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp() * 1000)
    except ValueError:
        pass
    try:
        return int(datetime.now(UTC).timestamp() * 1000) - parse_duration(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r}: give an ISO date/time or a duration like 24h"
        ) from None


def _signer() -> Signer:
    try:
        return load_signer(Settings.load(), create=False)
    except HitlError as exc:
        err.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None


@audit_app.command("verify", short_help="Check every chain and every signature.")
def audit_verify(
    since_text: Annotated[str | None, typer.Option("--since", help="ISO date or '24h'")] = None,
    heads_file: Annotated[
        Path | None,
        typer.Option("--heads", help="A file `audit heads` wrote: check no history changed."),
    ] = None,
) -> None:
    """Check every chain and every decision's signature; exit 1 naming each request that
    fails."""
    text = heads_file.read_text() if heads_file is not None else None

    async def work(rt: Runtime) -> tuple[int, int, list[str]]:
        trusted = require_public_keys(rt.claims.keys)
        since = since_ms(since_text)
        kept = await archived(rt)
        ids = await rt.requests.ids_between(since)
        found = [f"archive: {p}" for p in kept.problems]
        found += [_line(f) for f in archive_audit.findings(kept, trusted.verify, since)]
        found += [_line(f) async for f in audit.verify_all(rt.requests, since)]
        found += [_line(f) async for f in audit.unsealed_all(rt.requests, trusted.verify, since)]
        # One copy each: a request a stopped pass archived but did not remove yet is
        # checked where it stands, so no grant's passes are counted twice.
        live = set(ids) if since == 0 else set(await rt.requests.ids_between())
        old = [r for r in kept.requests() if archive.created_at(r) >= since and r["id"] not in live]
        found += [
            _line(f)
            async for f in grant_findings(rt.requests, rt.grants, trusted.verify, since, old)
        ]
        found += [
            _line(f) async for f in stepup_findings(rt.requests, rt.passkeys, rt.policy, since, old)
        ]
        found += await _disorder(rt, since)
        if text is not None:
            try:
                heads_kept = heads.read_heads(text, trusted)
            except heads.BadHeadsFile as exc:
                return len(ids), 0, [f"heads file {heads_file}: {exc}"]
            gone = await rt.check_heads(heads_kept)
            found += [
                f"request {f.request_id}: {f.why}"
                for f in archive_audit.recheck_heads(kept, gone, heads_kept)
            ]
        return len(ids), len(old), found

    count, old, findings = run_cli(work)
    for line in findings:
        err.print(line, markup=False, soft_wrap=True)  # one finding a line, for grep
    if findings:
        raise typer.Exit(1)
    anchored = " Every kept head matches." if text is not None else ""
    where = f" ({old} of them in the archive)" if old else ""
    out.print(
        f"{count + old} requests{where}, every audit chain intact. "
        "Every decision signed with this bot's key, every approval under a standing "
        f"approval made by its signed grant.{anchored}",
        soft_wrap=True,
    )


def _line(f: audit.Finding) -> str:
    return f"request {f.request_id}: entry {f.seq}: {f.why}"


def say_archive_problems(problems: list[str]) -> None:
    """On stderr, each part of the archive that could not be read, and what that means;
    the caller then exits 1: what it printed is not the whole history."""
    for p in problems:
        err.print(cli_msg.ARCHIVE_PROBLEM.format(problem=p), markup=False, soft_wrap=True)
    if problems:
        err.print(cli_msg.ARCHIVE_PARTIAL, markup=False, soft_wrap=True)


async def archived(rt: Runtime) -> Archive:
    """The archive retention wrote (HITL_ARCHIVE_DIR), followed back from the newest
    segment the store names."""
    newest = await archive.newest(rt.requests.redis)
    return rt.archive(newest[1] if newest else None)


async def _disorder(rt: Runtime, since: int) -> list[str]:
    """Entries out of order, which recomputed links hide: a version going back, an entry
    recorded twice, a request put back below its history (bot/core/proof/chain_order.py)."""
    return [
        f"request {f.request_id}: entry {f.seq}: {f.why}"
        async for f in audit.disordered_all(rt.requests, since)
    ]


@audit_app.command("export", short_help="Every audit entry as JSON lines.")
def audit_export(
    since: Since = None,
    output: Annotated[Path | None, typer.Option("--output", "-o")] = None,
) -> None:
    """Every audit entry as JSON lines (to stdout, or --output FILE)."""

    async def work(rt: Runtime) -> tuple[list[str], list[str]]:
        kept = await archived(rt)
        live = [line async for line in audit.export(rt.requests, since_ms(since))]
        ids = set(await rt.requests.ids_between())
        return [*archive_audit.export(kept, ids, since_ms(since)), *live], kept.problems

    lines, problems = run_cli(work)
    _write("".join(line + "\n" for line in lines), output, f"{len(lines)} entries")
    if problems:
        say_archive_problems(problems)
        raise typer.Exit(1)


@audit_app.command("heads", short_help="Every chain head, signed, to keep outside Redis.")
def audit_heads(output: Annotated[Path | None, typer.Option("--output", "-o")] = None) -> None:
    """Every request's chain head (id, head hash, seq), signed with serve's key: keep the
    file outside Redis and check it later with `audit verify --heads FILE`."""
    signer = _signer()

    async def work(rt: Runtime) -> dict[str, Any]:
        return await heads.export_heads(rt.requests, signer, rt.clock())

    doc = run_cli(work)
    _write(json.dumps(doc, indent=1) + "\n", output, f"the heads of {len(doc['heads'])} requests")


def _write(text: str, output: Path | None, what: str) -> None:
    """To stdout, or to `output` with one line on stderr saying what was written."""
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
        err.print(f"wrote {what} to {output}")
