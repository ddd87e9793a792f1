"""Standing approvals, as the Slack side registers them (bot/slack/features.py)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.gate.runtime import Runtime
from bot.slack.grants.handlers import GrantHandlers, grants_command, with_grants
from bot.slack.grants.notes import GrantNotes
from bot.slack.listeners.approvals import Approvals
from bot.slack.seams import CardPart, Feature, Tools


def _part(t: Tools) -> CardPart:
    return GrantNotes(t.rt, t.client, t.policy)


def _listen(app: AsyncApp, rt: Runtime, approvals: Approvals) -> None:
    GrantHandlers(rt).register(app)


GRANTS = Feature(
    name="grants",
    card_part=_part,
    listen=_listen,
    verbs={"grants": grants_command},
    home=with_grants,
)
