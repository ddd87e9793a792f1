"""Clicks on a question's option buttons (bot.slack.blocks.options draws them): first wins.

A click answers the question with that option; the QUESTION script keeps the first
answer, so a later click is told who chose what, and nothing changes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import QuestionState
from bot.errors import AlreadyResolved, HitlError, StoreUnavailable
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.access.permissions import actor_team, is_foreign
from bot.slack.blocks import escape as esc
from bot.slack.blocks.options import ACTION_PATTERN, issued
from bot.slack.listeners.approvals import tell

log = logging.getLogger(__name__)

# (client, user, question id, foreign?) -> may this person answer?
MayAnswer = Callable[[AsyncWebClient, str, str, bool], Awaitable[bool]]


class OptionButtons:
    def __init__(self, rt: Runtime, may_answer: MayAnswer) -> None:
        self.rt = rt
        self.may_answer = may_answer

    def register(self, app: AsyncApp) -> None:
        app.action(ACTION_PATTERN)(self.on_click)

    async def on_click(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        context: dict[str, Any],
    ) -> None:
        await ack()
        action = body["actions"][0]
        user = body["user"]["id"]
        found = issued(action.get("action_id"), action.get("value"))
        if found is None:
            log.info("option refused", extra={"actor": user, "value": action.get("value")})
            await _tell(client, body, smsg.OPTION_NOT_OFFERED)
            return
        index, qid = found
        try:
            q = await self.rt.questions.get(qid)
            if index >= len(q.options):
                log.info("option refused", extra={"actor": user, "question": qid})
                await _tell(client, body, smsg.OPTION_NOT_OFFERED)
                return
            option = q.options[index]
            if not await self.may_answer(client, user, qid, is_foreign(actor_team(body), context)):
                await _tell(client, body, smsg.MAY_NOT_ANSWER_SHORT)
                return
            await self.rt.questions.answer(qid, actor=user, answer=option)
        except AlreadyResolved:
            await _tell(client, body, await self._taken(qid))
        except StoreUnavailable as exc:  # "Not yet saved ... Try again": not "closed"
            await _tell(client, body, str(exc))
        except HitlError as exc:
            log.info("option refused", extra={"actor": user, "question": qid, "error": str(exc)})
            await _tell(client, body, smsg.REFUSAL_DEFAULTS["question_closed"])

    async def _taken(self, qid: str) -> str:
        q = await self.rt.questions.get(qid)
        if q.state != QuestionState.ANSWERED or not q.answered_by:
            return smsg.REFUSAL_DEFAULTS["question_closed"]
        return smsg.OPTION_TAKEN.format(
            who=esc.user(q.answered_by), option=esc.mrkdwn(q.answer or "")
        )


async def _tell(client: AsyncWebClient, body: dict[str, Any], text: str) -> None:
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    thread = (body.get("message") or {}).get("thread_ts") or container.get("thread_ts")
    if channel:
        await tell(client, channel=channel, user=body["user"]["id"], text=text, thread_ts=thread)
