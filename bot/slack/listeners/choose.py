"""Clicks on a proposal's Choose buttons (bot/slack/blocks/proposals.py draws them).

A choice is a person's decision like Approve: the same eligibility, the same seal, the
same refusals told in an ephemeral. It approves exactly the candidate clicked, read
from the store (never from the click), as an edit to that candidate; the store takes
only one of the proposal's candidates (bot/core/candidates.py).
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.async_app import AsyncBoltContext as BoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import Decision
from bot.core.states import Event
from bot.errors import HitlError
from bot.slack import messages as smsg
from bot.slack.access.permissions import actor_team, is_foreign
from bot.slack.blocks import lines
from bot.slack.blocks.proposals import ACTION_CHOOSE, parse_choice
from bot.slack.listeners.approvals import Approvals, _ephemeral, refusal_text

_ACTION = re.compile(rf"^{ACTION_CHOOSE}_(\d+)$")


class Choose:
    def __init__(self, approvals: Approvals) -> None:
        self.approvals = approvals

    def register(self, app: AsyncApp) -> None:
        app.action(_ACTION)(self.on_choose)

    async def on_choose(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        await ack()
        user = body["user"]["id"]
        foreign = is_foreign(actor_team(body), context)
        try:
            index, rid, phash = parse_choice(body["actions"][0].get("value", ""))
            req = await self.approvals.rt.requests.get(rid)
            if not 0 <= index < len(req.candidates):
                raise ValueError("no such candidate")
            choice = Decision(
                event=Event.EDIT_AND_APPROVE,
                payload_hash=phash,
                new_args=req.candidates[index],
            )
            await self.approvals.decide(client, user, rid, choice, foreign=foreign)
        except ValueError:
            await _ephemeral(client, body, lines.refusal("invalid", detail=smsg.BAD_BUTTON))
        except HitlError as exc:
            await _ephemeral(client, body, refusal_text(exc))
