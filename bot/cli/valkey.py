"""`hitl-bot valkey status | stop`: the embedded Valkey that processes without REDIS_URL share.

Neither command starts a server or registers as its user: they only look, and
`stop` stops one that no hitl-bot process uses (left running after every user
was killed). While users remain, the last one to exit stops it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from bot.config import Settings
from bot.db import messages as msg
from bot.db.valkey.embedded_watch import status, stop_unused
from bot.errors import HitlError

valkey_app = typer.Typer(
    no_args_is_help=True, help="The embedded Valkey shared by processes without REDIS_URL."
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

DataDirOpt = Annotated[
    Path | None,
    typer.Option("--data-dir", help="The data dir (default: HITL_DATA_DIR)."),
]


def _data_dir(given: Path | None) -> Path:
    try:
        settings = Settings.load()
    except HitlError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    if given is None and settings.redis_url is not None:
        err.print(msg.CLI_REMOTE, markup=False)
        raise typer.Exit(2)
    return (given or settings.hitl_data_dir).expanduser().resolve()


def _command(pid: int) -> str:
    """The user's command line, for a person to recognise it (Linux; else '?')."""
    try:
        raw = (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"


@valkey_app.command("status", short_help="Whether it runs, and which processes use it.")
def valkey_status(
    data_dir: DataDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Whether it runs, its pid, and which hitl-bot processes use it. Exit 1 if not running."""
    found = asyncio.run(status(_data_dir(data_dir)))
    if as_json:
        body = dataclasses.asdict(found) | {"data_dir": str(found.data_dir)}
        print(json.dumps(body, indent=2))
    elif found.pid is None and found.keys is None:
        out.print(msg.CLI_NOT_RUNNING.format(data_dir=found.data_dir), markup=False)
    else:
        line = msg.CLI_STATUS.format(
            data_dir=found.data_dir,
            state=found.state.value,
            pid=found.pid if found.pid is not None else "?",
            keys=found.keys if found.keys is not None else "?",
            aof=found.appendonly,
            fsync=found.appendfsync,
        )
        out.print(line, markup=False)
        if found.users:
            out.print(msg.CLI_USERS.format(count=len(found.users)), markup=False)
            for pid in found.users:
                out.print(msg.CLI_USER.format(pid=pid, command=_command(pid)), markup=False)
        else:
            out.print(msg.CLI_NO_USERS, markup=False)
    if found.keys is None:
        raise typer.Exit(1)


@valkey_app.command("stop", short_help="Stop it if no hitl-bot process uses it.")
def valkey_stop(data_dir: DataDirOpt = None) -> None:
    """Stop it if no hitl-bot process uses it (exit 1, naming them, if some do)."""
    where = _data_dir(data_dir)
    try:
        result = asyncio.run(stop_unused(where))
    except HitlError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    if result.users:
        pids = ", ".join(map(str, result.users))
        err.print(
            msg.CLI_IN_USE.format(count=len(result.users), data_dir=where, pids=pids),
            markup=False,
        )
        raise typer.Exit(1)
    if not result.stopped:
        out.print(msg.CLI_NOT_RUNNING.format(data_dir=where), markup=False)
        return
    out.print(
        msg.CLI_STOPPED.format(data_dir=where, pid=result.pid, aof=where / "appendonlydir"),
        markup=False,
    )
