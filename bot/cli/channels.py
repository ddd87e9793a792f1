"""`hitl-bot policy check`'s look at Slack: the policy's channels, when Slack is set up."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from bot.core.policy import Policy
from bot.errors import HitlError
from bot.slack import messages as msg_slack

if TYPE_CHECKING:
    from bot.slack.checks.principals import ChannelCheck

err = Console(stderr=True)


def check_channels_in_slack(policy: Policy) -> ChannelCheck | None:
    """With SLACK_BOT_TOKEN set, look the policy's channels up in Slack: an unknown or
    archived one fails the check (exit 2), a public channel approving a high or critical
    tier is warned of; None when Slack is not configured or cannot be reached."""
    from bot.config import Settings
    from bot.slack.checks.principals import UNREACHABLE, check_channels
    from bot.slack.transport.client import web_client

    try:
        settings = Settings.load()
    except HitlError:
        return None
    if settings.slack_bot_token is None:
        return None

    async def look() -> ChannelCheck:
        return await check_channels(web_client(settings), policy)

    try:
        checked = asyncio.run(look())
    except UNREACHABLE as exc:
        err.print(msg_slack.CHANNELS_UNCHECKED.format(error=exc), markup=False, highlight=False)
        return None
    if checked.problems:
        err.print("\n".join(checked.problems), markup=False, highlight=False)
        raise typer.Exit(2)
    if checked.ids:
        names = ", ".join(f"{n}={i}" for n, i in checked.ids.items() if n != i) or "ids only"
        err.print(msg_slack.CHANNELS_CHECKED.format(names=names), markup=False, highlight=False)
    for warning in checked.warnings:  # loud: a public channel approving high-risk calls
        err.print(warning, style="bold red", markup=False, highlight=False)
    return checked
