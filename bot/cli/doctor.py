"""`hitl-bot doctor`: check a deployment, one line per finding, each PASS, WARN or FAIL
with its fix. It changes nothing (no key is made, nothing is written to the store); it
exits 1 when any line is FAIL, so a deploy script can run it before `serve`.

The lines, in order: the policy; the Slack token and its scopes; the bot's membership of
every channel the policy names; the policy's user groups; Socket Mode or the events URL;
the signing key; retention and its archive; the store (reachable, persistence,
replicas); a worker offering an agent; the default agent.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from bot.cli import messages as msg
from bot.cli.doctor_lines import Line, Status, fail
from bot.errors import HitlError
from bot.logs import setup as setup_logging

out = Console(soft_wrap=True)
STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red"}


async def run_checks(events_url: str | None) -> list[Line]:
    # Here, not at the top: every other command starts without the Slack client's weight.
    from bot.cli.doctor_local import key_line, policy_line, retention_line, store_lines
    from bot.cli.doctor_slack import slack_lines
    from bot.config import Settings
    from bot.slack.checks.principals import UNREACHABLE

    try:
        settings = Settings.load()
    except HitlError as exc:
        return [fail("settings", msg.DOCTOR_SETTINGS_BAD.format(error=exc))]
    first, policy = policy_line(settings)
    try:
        slack = await slack_lines(settings, policy, events_url)
    except UNREACHABLE as exc:  # Slack went away between two calls
        text = msg.DOCTOR_SLACK_UNREACHABLE.format(url=settings.slack_api_url, error=exc)
        slack = [fail("slack", text, msg.DOCTOR_SLACK_UNREACHABLE_FIX)]
    local = [key_line(settings), retention_line(settings)]
    return [first, *slack, *local, *await store_lines(settings, policy)]


def _print(lines: list[Line]) -> None:
    for line in lines:
        status = f"[{STYLE[line.status]}]{line.status.value}[/]"
        out.print(f"{status}  {line.check}: {escape(line.text)}", highlight=False)
        if line.fix:
            out.print(f"      fix: {escape(line.fix)}", highlight=False)
    count = {s: sum(1 for x in lines if x.status is s) for s in Status}
    out.print(
        msg.DOCTOR_SUMMARY.format(
            fails=count[Status.FAIL], warns=count[Status.WARN], passes=count[Status.PASS]
        ),
        highlight=False,
    )


def doctor(
    events_url: Annotated[
        str | None,
        typer.Option(
            help="HTTP mode: the Request URL Slack calls (https://HOST/slack/events); "
            "doctor sends it Slack's signed challenge"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead.")] = False,
) -> None:
    """Check a deployment: Slack token and scopes, channels, user groups, Socket Mode or the
    events URL, the store, the signing key, the policy, the workers and the default agent."""
    setup_logging(logging.ERROR)  # the findings are the lines; start-up warnings would repeat them
    lines = asyncio.run(run_checks(events_url))
    if as_json:
        for line in lines:
            row = {"check": line.check, "status": line.status.value, "text": line.text}
            print(json.dumps(row | {"fix": line.fix}))
    else:
        _print(lines)
    if any(line.status is Status.FAIL for line in lines):
        raise typer.Exit(1)
