"""A run's home thread: replies become answers to the agent's question, or steering."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.choices import matching_option
from bot.core.models import RUN_FINAL, Question, QuestionState, Run
from bot.errors import HitlError, NotFound, StoreUnavailable
from bot.gate.corrections import correct, open_question
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.access.permissions import actor_team, audit_refusal, is_foreign, may_direct
from bot.slack.blocks import render, views
from bot.slack.blocks.modal_errors import Names, modal_refusal
from bot.slack.blocks.options import options_line
from bot.slack.listeners.approvals import open_view, tell
from bot.slack.listeners.option_buttons import OptionButtons
from bot.slack.listeners.replies import ReplyDecisions
from bot.store.run.runs import RunStore

log = logging.getLogger(__name__)
_MENTION = re.compile(r"<@[A-Z0-9]+(\|[^>]*)?>")
# Message subtypes that are still a person writing: "thread_broadcast" (a reply also
# sent to the channel) and "file_share" (a message with a file; its text is the reply).
PERSON_SUBTYPES = frozenset({None, "thread_broadcast", "file_share"})


class Threads:
    def __init__(
        self,
        rt: Runtime,
        runs: RunStore,
        replies: ReplyDecisions,
        *,
        default_agent: str | None,
    ) -> None:
        self.rt = rt
        self.runs = runs
        self.replies = replies
        self.default_agent = default_agent
        self.names = Names()

    def register(self, app: AsyncApp) -> None:
        app.event("message")(self.on_message)
        app.event("app_mention")(self.on_mention)
        app.action(render.ACTION_ANSWER)(self.on_answer_button)
        app.view(render.VIEW_ANSWER)(self.on_answer_modal)
        OptionButtons(self.rt, self._may_option).register(app)

    async def on_message(
        self, event: dict[str, Any], client: AsyncWebClient, context: dict[str, Any]
    ) -> None:
        """A reply in a thread of ours is, in this order: the answer to the question the
        run waits on; a decision on the thread's pending card; a correction of the run.
        A reply that is none of these is told why, and logged: nothing typed vanishes."""
        # The bot's own posts, edits and joins are not people talking to the agent; a
        # reply also sent to the channel, or with a file, is a person's reply all the same.
        if event.get("bot_id") or event.get("subtype") not in PERSON_SUBTYPES:
            return
        thread, ts = event.get("thread_ts"), event.get("ts")
        if not thread or thread == ts:
            return
        channel, user = event["channel"], event.get("user", "")
        foreign = is_foreign(actor_team(event), context)
        run_id = await self.runs.by_thread(channel, thread)
        run = await self.runs.get(run_id) if run_id else None
        live = run is not None and run.state not in RUN_FINAL
        waiting = run.waiting_on if run is not None and live else None
        text = _MENTION.sub("", event.get("text", "")).strip()
        source = f"{channel}:{ts}"
        # A question the run waits on takes the reply first: a "yes" meant for it must
        # never approve a card filed under the run meanwhile.
        question = (
            await open_question(self.rt.steering, self.rt.questions, run)
            if run is not None and live and text
            else None
        )
        if (
            run is not None
            and question
            and await self._answer(client, event, run, question, text, foreign=foreign)
        ):
            return
        # "approve" / "reject: why" on a pending card decides like its buttons
        bot_user = context.get("bot_user_id")
        owner = run.owner if run is not None else None
        if await self.replies.handle(
            client, event, bot_user=bot_user, waiting_on=waiting, foreign=foreign, run_owner=owner
        ):
            return
        if run is None and text and await self._answer_card(client, event, text, foreign):
            return
        if run is None or not live:
            await self._unheard(client, event, run)
            return
        if not text:
            return
        if not await may_direct(self.rt, client, user, run, foreign=foreign):
            why = smsg.FOREIGN_MAY_NOT_DIRECT if foreign else smsg.MAY_NOT_DIRECT
            await self._refuse(client, event, run.id, "steer", why.format(run_id=run.id))
            return
        try:
            await correct(
                self.rt.steering,
                self.rt.requests,
                self.runs,
                run.id,
                text,
                actor=user,
                source=source,
            )
        except StoreUnavailable as exc:  # "Not yet saved ... Try again": said, not dropped
            await self._tell(event, client, str(exc))

    async def _answer(
        self,
        client: AsyncWebClient,
        event: dict[str, Any],
        run: Run,
        qid: str,
        text: str,
        *,
        foreign: bool,
    ) -> bool:
        """Take the reply as the answer to `qid`; False when the question is no longer open
        (answered or closed meanwhile), so the reply is read as anything else would be."""
        q = await self._open(qid)
        if q is None:
            return False
        user = event.get("user", "")
        if not await may_direct(self.rt, client, user, run, foreign=foreign):
            why = smsg.FOREIGN_MAY_NOT_DIRECT if foreign else smsg.MAY_NOT_ANSWER
            await self._refuse(client, event, run.id, "answer", why.format(run_id=run.id))
            return True

        async def refuse(hint: str) -> None:  # told why, never silently taken as steering
            await self._refuse(client, event, run.id, "answer", hint)

        return await self._take(client, event, q, text, refuse)

    async def _answer_card(
        self, client: AsyncWebClient, event: dict[str, Any], text: str, foreign: bool
    ) -> bool:
        """A reply in the thread of a question's own card (asked outside any run's thread):
        its answer, if it is still open and this person may answer it."""
        qid = await self.rt.threads.question(event["channel"], event["thread_ts"])
        q = await self._open(qid) if qid is not None else None
        if q is None:
            return False
        if not await self._may_answer(client, event.get("user", ""), q.id, foreign=foreign):
            await self._tell(event, client, smsg.CARD_MAY_NOT_ANSWER)
            return True

        async def say(hint: str) -> None:
            await self._tell(event, client, hint)

        return await self._take(client, event, q, text, say)

    async def _open(self, qid: str) -> Question | None:
        """The question, while it is still open."""
        try:
            q = await self.rt.questions.get(qid)
        except HitlError:
            return None
        return q if q.state == QuestionState.OPEN else None

    async def _take(
        self,
        client: AsyncWebClient,
        event: dict[str, Any],
        q: Question,
        text: str,
        refuse: Callable[[str], Awaitable[None]],
    ) -> bool:
        """Record the reply as `q`'s answer, or `refuse` it saying which options there are;
        False when someone answered a moment before (the reply is read as anything else)."""
        answer = matching_option(q.options, text) if q.options else text
        if answer is None:
            await refuse(smsg.OPTION_REPLY_NOT_ONE.format(options=options_line(q.options)))
            return True
        try:
            await self.rt.questions.answer(q.id, actor=event.get("user", ""), answer=answer)
        except StoreUnavailable as exc:  # not (yet) saved: never read as a correction
            await self._tell(event, client, str(exc))
            return True
        except HitlError:
            return False
        await self.rt.cards.set_answer_source(q.id, event["channel"], event["ts"])
        return True

    async def _refuse(
        self, client: AsyncWebClient, event: dict[str, Any], run_id: str, what: str, text: str
    ) -> None:
        user = event.get("user", "")
        await audit_refusal(self.rt, run_id, user=user, what=what)
        log.info("reply refused", extra={"what": what, "actor": user, "run_id": run_id})
        await self._tell(event, client, text)

    async def _tell(self, event: dict[str, Any], client: AsyncWebClient, text: str) -> None:
        """`text` to the reply's author alone, in its thread."""
        user, channel = event.get("user", ""), event["channel"]
        await tell(client, channel=channel, user=user, thread_ts=event["thread_ts"], text=text)

    async def _unheard(
        self, client: AsyncWebClient, event: dict[str, Any], run: Run | None
    ) -> None:
        """A reply in a thread of ours that went nowhere: say so to its author."""
        channel, thread, user = event["channel"], event["thread_ts"], event.get("user", "")
        if run is not None:
            text = smsg.REPLY_RUN_ENDED.format(run_id=run.id, state=run.state.value)
        elif not await self.rt.threads.has_cards(channel, thread):
            return  # a thread the bot never posted in: people talking among themselves
        elif await self.replies.pending_in(channel, thread, None):
            text = smsg.REPLY_NOT_A_DECISION
        else:
            text = smsg.REPLY_NOTHING_PENDING
        log.info(
            "a reply that decides, answers and steers nothing",
            extra={"actor": user, "channel": channel, "thread_ts": thread, "ts": event.get("ts")},
        )
        await self._tell(event, client, text)

    async def mention_agent(self) -> tuple[str | None, list[str]]:
        """The agent a mention starts (HITL_DEFAULT_AGENT, else the one agent the workers
        offer), or None, with what the workers offer."""
        offered = await self.rt.agents.offered()
        if self.default_agent:
            return self.default_agent, offered
        return (offered[0] if len(offered) == 1 else None), offered

    async def on_mention(self, event: dict[str, Any], client: AsyncWebClient) -> None:
        channel, thread = event["channel"], event.get("thread_ts")
        if thread and (
            await self.runs.by_thread(channel, thread)
            or await self.rt.threads.has_cards(channel, thread)
        ):
            return  # a mention inside a run's or a card's thread is a reply, handled as one
        prompt = _MENTION.sub("", event.get("text", "")).strip()
        if not prompt:
            return
        agent, offered = await self.mention_agent()
        if agent is None:
            # No agent chosen: never a built-in toy on the team's model. Say how to choose.
            names = ", ".join(f"`{n}`" for n in offered) if offered else smsg.NO_AGENTS_OFFERED
            text = smsg.MENTION_NO_AGENT.format(agents=names)
            log.info("mention without an agent", extra={"channel": channel, "offered": offered})
            await client.chat_postMessage(channel=channel, thread_ts=event["ts"], text=text)
            return
        await self.runs.start(
            agent=agent,
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

    async def on_answer_modal(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        context: dict[str, Any],
    ) -> None:
        view = body["view"]
        answer = views.parse_answer(view["state"]["values"]).strip()
        if not answer:
            await ack(response_action="errors", errors={views.ANSWER_BLOCK: smsg.ANSWER_EMPTY})
            return
        qid, user = view.get("private_metadata", ""), body["user"]["id"]
        try:
            if not await self._may_answer(
                client, user, qid, foreign=is_foreign(actor_team(body), context)
            ):
                await ack(
                    response_action="errors",
                    errors={views.ANSWER_BLOCK: smsg.MAY_NOT_ANSWER_SHORT},
                )
                return
            await self.rt.questions.answer(qid, actor=user, answer=answer)
        except HitlError as exc:
            why = await modal_refusal(self.names, client, exc)
            await ack(response_action="errors", errors={views.ANSWER_BLOCK: why})
            return
        await ack()

    async def _may_option(self, client: AsyncWebClient, user: str, qid: str, foreign: bool) -> bool:
        return await self._may_answer(client, user, qid, foreign=foreign)

    async def _may_answer(
        self, client: AsyncWebClient, user: str, qid: str, *, foreign: bool
    ) -> bool:
        """The people who may steer a question's run may answer it; a question of no run
        we keep a record of (asked over the API, or under an outside agent's own run id)
        is answered by whoever its channel shows it to, as long as they are of this
        workspace."""
        q = await self.rt.questions.get(qid)
        if not q.run_id:
            return not foreign
        try:
            run = await self.runs.get(q.run_id)
        except NotFound:
            return not foreign
        allowed = await may_direct(self.rt, client, user, run, foreign=foreign)
        if not allowed:
            await audit_refusal(self.rt, run.id, user=user, what="answer")
            log.info("answer refused", extra={"actor": user, "run_id": run.id, "question": qid})
        return allowed
