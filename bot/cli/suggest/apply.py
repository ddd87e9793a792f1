"""`hitl-bot policy apply FRAGMENT --by NAME`: a reviewed suggestion (or any `tools:`
fragment) merged into the policy file, audited, and `hitl-bot policy applied` to list what
was. The merged policy must load (the same checks as `policy check`) before anything is
written: a fragment that breaks it changes nothing. Serve reads the file at start, so the
change takes effect at its next start, or first as the shadow policy."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

from bot.cli.audit import run_cli
from bot.cli.suggest import messages as msg
from bot.core.policy import parse_policy
from bot.errors import HitlError
from bot.messages import when
from bot.store.policy_log import Applied, applied, record

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)  # an error names a path: never split it


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fragment(path: Path) -> tuple[dict[str, Any], bytes]:
    """The fragment's tools, and the bytes they were read from: the log's hash is of what
    was applied, even if the file changes meanwhile."""
    try:
        raw = path.read_bytes()
        data = yaml.safe_load(raw)
    except (OSError, yaml.YAMLError) as exc:
        err.print(msg.APPLY_REFUSED.format(path=path, problem=exc), markup=False)
        raise typer.Exit(2) from None
    if not isinstance(data, dict) or set(data) != {"tools"} or not isinstance(data["tools"], dict):
        err.print(msg.APPLY_NOT_A_FRAGMENT.format(path=path), markup=False)
        raise typer.Exit(2)
    return data["tools"], raw


def _write_atomically(target: Path, text: str) -> None:
    """Replace `target` whole: a crash leaves the old file or the new one, never half."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, target)


def policy_apply(
    fragment: Path,
    by: Annotated[str, typer.Option("--by", help="Who applies it (recorded).")],
    policy: Annotated[
        Path | None,
        typer.Option("--policy", help="The policy file to change (default: HITL_POLICY)."),
    ] = None,
) -> None:
    """Merge a reviewed `tools:` fragment (`policy suggest --out`) into the policy file,
    after checking that the result loads, and record who applied which fragment."""
    if not by.strip():
        err.print(msg.APPLY_NEEDS_BY, markup=False)
        raise typer.Exit(2)
    named = policy or os.environ.get("HITL_POLICY", "")
    if not str(named):
        err.print(msg.APPLY_NO_POLICY, markup=False)
        raise typer.Exit(2)
    target = Path(named)
    if not target.is_file():
        err.print(msg.APPLY_NOT_A_FILE.format(target=target), markup=False)
        raise typer.Exit(2)
    tools, raw = _fragment(fragment)
    before = target.read_bytes()
    current = yaml.safe_load(before) or {}
    merged = {**current, "tools": {**(current.get("tools") or {}), **tools}}
    try:
        parse_policy(merged)
    except (HitlError, ValueError) as exc:
        err.print(msg.APPLY_REFUSED.format(path=fragment, problem=exc), markup=False)
        raise typer.Exit(2) from None
    after = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True)
    entry = Applied(
        at=0,
        by=by.strip(),
        fragment_sha256=_sha(raw),
        before_sha256=_sha(before),
        after_sha256=_sha(after.encode()),
        target=str(target),
        tools=tuple(sorted(tools)),
    )

    async def audited(rt: Any) -> None:
        # Recorded first: a change the log lacks must never be in effect.
        await record(rt.requests.redis, dataclasses.replace(entry, at=rt.clock()))

    run_cli(audited)
    _write_atomically(target, after)
    out.print(
        msg.APPLIED.format(
            path=fragment, target=target, n=len(tools), tools=", ".join(entry.tools),
            by=entry.by, sha=entry.fragment_sha256[:12],
        ),
        markup=False,
        highlight=False,
    )  # fmt: skip


def policy_applied() -> None:
    """The policy changes applied with `hitl-bot policy apply`, oldest first."""
    found = run_cli(lambda rt: applied(rt.requests.redis))
    if not found:
        out.print(msg.APPLIED_NONE, markup=False)
        return
    for a in found:
        line = msg.APPLIED_LINE.format(
            at=when(a.at)[:16] + " UTC", by=a.by, target=a.target, tools=",".join(a.tools),
            sha=a.fragment_sha256[:12], before=a.before_sha256[:12], after=a.after_sha256[:12],
        )  # fmt: skip
        out.print(line, markup=False, highlight=False)
