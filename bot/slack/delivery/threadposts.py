"""What the notifier posts besides a request's card: a question's card, a run's header
and closing line, a line in a run's thread, and the reactions on a person's steer.

Split from bot/slack/delivery/notifier.py, which dispatches each notice here; the
same rule holds: every handler renders the item's current state, so a notice handled
twice or late converges on the same message.
"""

from __future__ import annotations

from contextvars import ContextVar

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import RUN_FINAL, Run
from bot.errors import NotFound
from bot.slack.blocks import render
from bot.slack.delivery.once import OncePoster, Tag
from bot.slack.delivery.runlines import RunLines
from bot.store.run.runs import RunStore
from bot.store.stores import StoreSet
from bot.store.stream.events import Notice

DEFAULT_CHANNEL = "#hitl-approvals"
# When the event being delivered happened (its entry id's ms): what the thread's lines
# are ordered by, rather than by when they are delivered.
EVENT_AT: ContextVar[int] = ContextVar("EVENT_AT", default=0)


class ThreadPosts:
    def __init__(
        self,
        rt: StoreSet,
        runs: RunStore,
        client: AsyncWebClient,
        once: OncePoster,
        lines: RunLines,
    ) -> None:
        self.rt = rt
        self.runs = runs
        self.client = client
        self.once = once
        self.lines = lines

    async def run_of(self, run_id: str | None) -> Run | None:
        """The item's run, if it has one that still exists (runs expire after 30 days)."""
        if not run_id:
            return None
        try:
            return await self.runs.get(run_id)
        except NotFound:
            return None

    async def question(self, n: Notice) -> None:
        q = await self.rt.questions.get(n.id)
        h = await self.rt.cards.question_card(q.id)
        if n.event == "delivered":
            await self.react(h.extra or "", "white_check_mark")
            return
        run = await self.run_of(q.run_id)
        channel, thread = (run.channel, run.thread_ts) if run else (None, None)
        mention = [run.requester] if run else []
        msg = render.question_message(q, mention, now_ms=self.rt.clock())
        if h.channel and h.ts:
            await self.client.chat_update(
                channel=h.channel, ts=h.ts, text=msg.text, blocks=msg.blocks
            )
            return
        await self.lines.said_other(q.run_id, at=EVENT_AT.get())
        post = await self.once.post(
            Tag("question", q.id, "question"),
            self.rt.cards.question_intent(q.id),
            channel=channel or q.channel or DEFAULT_CHANNEL,
            thread_ts=thread,
            text=msg.text,
            blocks=msg.blocks,
        )
        if post.adopted:
            await self.client.chat_update(
                channel=post.channel, ts=post.ts, text=msg.text, blocks=msg.blocks
            )
        await self.rt.cards.save_question_card(q.id, post.channel, post.ts)
        if thread is None:
            # A card of its own, outside any run's thread: a reply in its thread answers it
            # (bot/slack/listeners/threads.py), rather than falling where nobody reads.
            await self.rt.threads.add_question(post.channel, post.ts, q.id)

    async def run(self, n: Notice) -> None:
        run = await self.runs.get(n.id)
        if n.event == "start":
            if not run.thread_ts:
                head = render.run_header(run)
                resp = await self.client.chat_postMessage(
                    channel=run.channel or DEFAULT_CHANNEL, text=head.text, blocks=head.blocks
                )
                await self.runs.set_home(run.id, resp["channel"], resp["ts"])
                await self.lines.card_posted(run, resp["ts"])
                run = await self.runs.get(run.id)
            if run.channel and run.thread_ts:
                await self.lines.remember_link(run.id, run.channel, run.thread_ts)
            return
        await self.lines.refresh_card(run)
        ended = n.state in {s.value for s in RUN_FINAL}  # this event, not the run's latest
        if ended and run.channel and run.thread_ts:
            await self.say(run.channel, run.thread_ts, render.run_header(run).text)

    async def say(self, channel: str, thread_ts: str, text: str) -> None:
        run_id = await self.runs.by_thread(channel, thread_ts)
        await self.lines.said_other(run_id, at=EVENT_AT.get())
        await self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=text, unfurl_links=False
        )

    async def react(self, source: str, emoji: str) -> None:
        channel, _, ts = source.partition(":")
        if not channel or not ts:
            return
        try:
            await self.client.reactions_add(channel=channel, timestamp=ts, name=emoji)
        except SlackApiError as exc:
            if exc.response.get("error") != "already_reacted":  # a retry after success
                raise
