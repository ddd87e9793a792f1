"""A run's home thread: replies become answers to the agent's question, or steering."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages as msg
from bot.core.models import RUN_FINAL
from bot.errors import HitlError
from bot.runtime import Runtime
from bot.slack import render, views
from bot.slack.approvals import open_view, refusal_text, tell
from bot.slack.permissions import audit_refusal, may_direct
from bot.slack.replies import ReplyDecisions
from bot.store import keys
from bot.store.corrections import correct
from bot.store.runs import RunStore

_MENTION = re.compile(r"<@[A-Z0-9]+(\|[^>]*)?>")


class Threads:
    def __init__(
        self, rt: Runtime, runs: RunStore, replies: ReplyDecisions, *, default_agent: str
    ) -> None:
        self.rt = rt
        self.runs = runs
        self.replies = replies
        self.default_agent = default_agent

    def register(self, app: AsyncApp) -> None:
        app.event("message")(self.on_message)
        app.event("app_mention")(self.on_mention)
        app.action(render.ACTION_ANSWER)(self.on_answer_button)
        app.view(render.VIEW_ANSWER)(self.on_answer_modal)

    async def on_message(
        self, event: dict[str, Any], client: AsyncWebClient, context: dict[str, Any]
    ) -> None:
        # The bot's own posts, edits and joins are not people talking to the agent.
        if event.get("bot_id") or event.get("subtype"):
            return
        thread, ts = event.get("thread_ts"), event.get("ts")
        if not thread or thread == ts:
            return
        channel, user = event["channel"], event.get("user", "")
        run_id = await self.runs.by_thread(channel, thread)
        run = await self.runs.get(run_id) if run_id else None
        live = run is not None and run.state not in RUN_FINAL
        waiting = run.waiting_on if run is not None and live else None
        # "approve" / "reject: why" on a pending card decides like its buttons
        bot_user = context.get("bot_user_id")
        owner = run.owner if run is not None else None
        if await self.replies.handle(
            client, event, bot_user=bot_user, waiting_on=waiting, run_owner=owner
        ):
            return
        if run is None or run_id is None or not live:
            return
        text = _MENTION.sub("", event.get("text", "")).strip()
        if not text:
            return
        source = f"{channel}:{ts}"
        waiting = run.waiting_on or ""
        if waiting.startswith("q"):
            try:
                await self.rt.questions.answer(waiting, actor=user, answer=text)
                await self.rt.redis.hset(keys.question(waiting), "answer_source", source)
                return
            except HitlError:
                pass  # answered already or closed: the reply is a correction instead
        if not await may_direct(self.rt, client, user, run):
            await audit_refusal(self.rt, run_id, user=user, what="steer")
            refusal = msg.MAY_NOT_DIRECT.format(run_id=run_id)
            await tell(client, channel=channel, user=user, thread_ts=thread, text=refusal)
            return
        await correct(
            self.rt.steering, self.rt.requests, self.runs, run_id, text, actor=user, source=source
        )

    async def on_mention(self, event: dict[str, Any]) -> None:
        channel = event["channel"]
        if event.get("thread_ts") and await self.runs.by_thread(channel, event["thread_ts"]):
            return  # a mention inside a run's thread is a reply, handled as one
        prompt = _MENTION.sub("", event.get("text", "")).strip()
        if not prompt:
            return
        await self.runs.start(
            agent=self.default_agent,
            prompt=prompt,
            requester=event.get("user", ""),
            channel=channel,
            thread_ts=event["ts"],
        )

    async def on_answer_button(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        qid = body["actions"][0].get("value", "")
        try:
            q = await self.rt.questions.get(qid)
        except HitlError:
            return
        await open_view(client, body, views.answer_modal(q))

    async def on_answer_modal(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        view = body["view"]
        answer = views.parse_answer(view["state"]["values"]).strip()
        if not answer:
            await ack(response_action="errors", errors={views.ANSWER_BLOCK: msg.ANSWER_EMPTY})
            return
        try:
            await self.rt.questions.answer(
                view.get("private_metadata", ""), actor=body["user"]["id"], answer=answer
            )
        except HitlError as exc:
            await ack(
                response_action="errors", errors={views.ANSWER_BLOCK: refusal_text(exc)[:150]}
            )
            return
        await ack()
