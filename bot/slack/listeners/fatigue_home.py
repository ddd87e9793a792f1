"""Whether the App Home shows the operators' panel, and what is in it: only to the
policy's `operators` (user ids, groups or channels, as for reading any audit trail),
the fatigue figures of the week before the tab was opened, then the policy suggestions
serve's hourly check last mined (one read of the summary it kept,
bot/slack/nudges/suggested.py)."""

from __future__ import annotations

import logging

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.hindsight.fatigue import WEEK_MS
from bot.errors import HitlError
from bot.gate.runtime import Runtime
from bot.slack.access.permissions import is_operator
from bot.slack.blocks import escape as esc
from bot.slack.blocks import home_messages as hmsg
from bot.slack.blocks.escape import Block
from bot.slack.blocks.fatigue_panel import fatigue_blocks
from bot.slack.blocks.suggestions_panel import suggestion_blocks, suggestions_failed
from bot.store.figures import fatigue
from bot.store.figures.suggested import Suggested

# The newest requests of the week the panel reads each time an operator opens the tab
# (`hitl-bot report` reads them all): the tab must answer within Slack's patience.
HOME_LOOKED = 2_000
log = logging.getLogger(__name__)


async def operators_panel(
    rt: Runtime, client: AsyncWebClient, user: str, now_ms: int
) -> list[Block]:
    """The panel's blocks for an operator; nothing for anyone else."""
    if not await is_operator(rt, client, user):
        return []
    return [*await _figures(rt, now_ms), *await _suggestions(rt)]


async def _figures(rt: Runtime, now_ms: int) -> list[Block]:
    try:
        got = await fatigue.figures(rt.requests, now_ms - WEEK_MS, now_ms, limit=HOME_LOOKED)
    except (HitlError, ValueError) as exc:  # a damaged history: the rest of the tab still shows
        log.warning("approval-fatigue figures not read: %s", exc)
        return [esc.section(hmsg.FATIGUE_FAILED, block_id="hitl_fatigue_failed")]
    return fatigue_blocks(got)


async def _suggestions(rt: Runtime) -> list[Block]:
    try:
        summary = await Suggested(rt.requests.redis).load()
    except ValueError as exc:  # a damaged summary: say so; the next hour writes it again
        log.warning("policy suggestions not read: %s", exc)
        return suggestions_failed()
    return suggestion_blocks(summary, check_s=rt.settings.hitl_fatigue_check_s)
