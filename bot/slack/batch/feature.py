"""The batch digest, as the Slack side registers it (bot/slack/features.py)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.gate.runtime import Runtime
from bot.slack.batch.listeners import Batch
from bot.slack.batch.upkeep import DigestKeeper
from bot.slack.listeners.approvals import Approvals
from bot.slack.seams import CardPart, Feature, Tools


def _part(t: Tools) -> CardPart:
    return DigestKeeper(t.rt, t.client, t.once, holder=t.consumer)


def _listen(app: AsyncApp, rt: Runtime, approvals: Approvals) -> None:
    Batch(rt, approvals).register(app)


BATCH = Feature(name="batch", card_part=_part, listen=_listen)
