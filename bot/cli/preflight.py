"""`hitl-bot policy check`'s look at the token's scopes and the policy's user groups,
when Slack is set up (the channels: bot.cli.channels)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from bot.core.policy import Policy
from bot.errors import HitlError

if TYPE_CHECKING:
    from bot.slack.checks.preflight import Preflight

err = Console(stderr=True)


def check_preflight_in_slack(policy: Policy) -> Preflight | None:
    """With SLACK_BOT_TOKEN set: a scope the policy needs that the token lacks, or a user
    group Slack cannot resolve, fails the check (exit 2); any other missing scope is
    warned of. None when Slack is not configured or cannot be reached."""
    from bot.config import Settings
    from bot.slack.checks import check_messages as cmsg
    from bot.slack.checks.preflight import preflight
    from bot.slack.checks.principals import UNREACHABLE
    from bot.slack.transport.client import web_client

    try:
        settings = Settings.load()
    except HitlError:
        return None
    if settings.slack_bot_token is None:
        return None
    try:
        checked = asyncio.run(preflight(web_client(settings), policy))
    except UNREACHABLE as exc:
        err.print(cmsg.PREFLIGHT_UNCHECKED.format(error=exc), markup=False, highlight=False)
        return None
    if checked.problems:
        err.print("\n".join(checked.problems), markup=False, highlight=False)
        raise typer.Exit(2)
    if checked.groups.sizes:
        names = ", ".join(f"{g} ({n} members)" for g, n in checked.groups.sizes.items())
        err.print(cmsg.GROUPS_CHECKED.format(names=names), markup=False, highlight=False)
    for warning in checked.warnings:
        err.print(warning, style="bold yellow", markup=False, highlight=False)
    return checked
