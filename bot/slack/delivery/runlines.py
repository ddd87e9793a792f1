"""What a run's thread shows besides the cards: its run card, kept current, and the
calls that ran without review, folded into one line per burst.

Both remember their message with the run (bot/store/posted/cards.py), so any notifier
process can update what another one posted, and a retried notice converges on the
same text instead of posting it twice.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Run
from bot.slack import messages as msg
from bot.slack.blocks import escape as esc
from bot.slack.blocks import render
from bot.slack.blocks.call import free_item, free_line
from bot.store.posted.cards import Cards

log = logging.getLogger(__name__)

FOLD_MAX = 12  # calls per folded line; the next one starts a new line


def card_elsewhere(req: ActionRequest, channel: str, permalink: str) -> str:
    """The thread's line for a card posted in another channel (the tier's reviewers')."""
    link = msg.SL_CARD_LINK.format(url=permalink) if permalink.startswith("https://") else ""
    return msg.SL_CARD_ELSEWHERE.format(
        tool=esc.code(req.tool), risk=req.risk.value.upper(), channel=channel, link=link
    )


def thread_link(permalink: str, channel: str, thread_ts: str) -> str:
    """A thread's parent's permalink opens the channel at that message; with the thread's
    ts and channel in its query it opens the thread itself, as Slack's own "Copy link"
    of a reply does."""
    if "thread_ts=" in permalink:
        return permalink
    sep = "&" if "?" in permalink else "?"
    return f"{permalink}{sep}thread_ts={thread_ts}&cid={channel}"


class RunLines:
    def __init__(self, cards: Cards, client: AsyncWebClient) -> None:
        self.cards = cards
        self.client = client

    async def free_call(self, run: Run, req: ActionRequest, *, at: int) -> None:
        """Add `req` (its event at `at`, ms) to the thread's line of calls without review,
        or start one.

        A run's calls and its questions are events on different shards, read apart: a
        call made before a question may be delivered after it. It still joins the line
        above the question, so the thread reads in the order things happened.
        """
        if not run.channel or not run.thread_ts:
            return
        ts, calls, ended = await self.cards.free_line(run.id)
        if any(rid == req.id for rid, _ in calls):
            return  # a retried notice: the line already lists it
        if ts and len(calls) < FOLD_MAX and (ended is None or at <= ended):
            calls.append([req.id, free_item(req)])
            text = free_line([line for _, line in calls])
            await self.client.chat_update(channel=run.channel, ts=ts, text=text)
            await self.cards.set_free_line(run.id, ts, calls, ended=ended)
            return
        calls = [[req.id, free_item(req)]]
        resp = await self.client.chat_postMessage(
            channel=run.channel,
            thread_ts=run.thread_ts,
            text=free_line([calls[0][1]]),
            unfurl_links=False,
        )
        await self.cards.set_free_line(run.id, str(resp["ts"]), calls)

    async def said_other(self, run_id: str | None, *, at: int) -> None:
        """Another line went into the thread, for an event at `at` (ms): a free call
        made after it starts a new line, so the thread reads in the order things
        happened."""
        if run_id:
            await self.cards.end_free_line(run_id, at)

    async def card_posted(self, run: Run, ts: str) -> None:
        await self.cards.set_run_card(run.id, ts)

    async def remember_link(self, run_id: str, channel: str, thread_ts: str) -> None:
        """Record the thread's permalink once, for the operator's CLI. A refusal (a
        missing scope, a deleted message) leaves the CLI showing channel and ts."""
        try:
            got = await self.client.chat_getPermalink(channel=channel, message_ts=thread_ts)
        except SlackApiError as exc:
            log.info("no permalink for run %s: %s", run_id, exc.response.get("error"))
            return
        if got.get("permalink"):
            await self.cards.set_thread_link(
                run_id, thread_link(str(got["permalink"]), channel, thread_ts)
            )

    async def refresh_card(self, run: Run) -> None:
        """Bring the run card (if the bot posted one) to the run's current state."""
        ts = await self.cards.run_card(run.id)
        if not ts or not run.channel:
            return
        head = render.run_header(run)
        await self.client.chat_update(
            channel=run.channel, ts=str(ts), text=head.text, blocks=head.blocks
        )
