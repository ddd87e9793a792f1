"""`hitl-bot claude-code hook | install`. Each command imports its code when it runs, so
the rest of the command line loads none of it, and the hook none of `install`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from bot.errors import HitlError

claude_code_app = typer.Typer(
    add_completion=False,  # as the whole app: bot/cli/entry.py may run this group alone
    no_args_is_help=True,
    help="Claude Code's PreToolUse hook: every tool call through the approval gate.",
    rich_markup_mode=None,  # plain click help, as the other subcommands print it
)

DEFAULT_HOOK_TIMEOUT_S = 600  # Claude Code's own default for a command hook


@claude_code_app.command(short_help="Answer one PreToolUse call (stdin to stdout).")
def hook(
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds to wait for a person before withdrawing the request and denying; "
            "keep it below the hook's timeout in .claude/settings.json.",
        ),
    ] = 590.0,
    requester: Annotated[
        str | None,
        typer.Option(
            help="Who the requests name as requester (default: claude-code). Over HTTP the "
            "API token's identity is the requester; give this only if it is that identity."
        ),
    ] = None,
) -> None:
    """Read a PreToolUse call on stdin; print allow or deny as JSON (Claude Code runs it)."""
    from bot.claudecode import answer  # the standard library and the messages: loads

    try:  # a broken install or environment denies too: exit 1 would let the call run
        import logging

        from bot.claudecode.hook import run
        from bot.logs import setup as setup_logging

        setup_logging(logging.WARNING)  # stderr: Claude Code shows it only in its debug view
    except BaseException:
        answer.write(None)
        return
    run(timeout_s=timeout, requester=requester)


@claude_code_app.command(short_help="Add the hook to .claude/settings.json.")
def install(
    project: Annotated[
        Path, typer.Option(help="The project whose .claude/settings.json gets the hook.")
    ] = Path("."),
    timeout: Annotated[
        int,
        typer.Option(
            min=2,
            help="Claude Code's timeout for the hook, in seconds; the hook gives up on a "
            "person 10 s before it.",
        ),
    ] = DEFAULT_HOOK_TIMEOUT_S,
    matcher: Annotated[
        str, typer.Option(help="Which tools go through the gate (a Claude Code matcher).")
    ] = "*",
) -> None:
    """Add (or update) the hook in DIR/.claude/settings.json, keeping everything else."""
    from bot.claudecode import messages as msg
    from bot.claudecode.settings import install as write_hook
    from bot.messages import plural

    try:
        done = write_hook(project.expanduser().absolute(), timeout_s=timeout, matcher=matcher)
    except HitlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    print(msg.INSTALLED.format(path=done.path))
    print(json.dumps({"hooks": {"PreToolUse": [done.entry]}}, indent=2, ensure_ascii=False))
    if done.replaced:
        entries = plural(done.replaced, "entry", "entries")
        print(msg.REPLACED.format(count=done.replaced, entries=entries))
    print(msg.INSTALL_NEXT.format(matcher=matcher))
