"""What a run's thread shows besides the cards: its run card, kept current, and the
calls that ran without review, folded into one line per burst.

Both remember their message in the run's own hash (extra fields the `Run` model
ignores), so any notifier process can update what another one posted, and a
retried notice converges on the same text instead of posting it twice.
"""

from __future__ import annotations

import json
import logging
from typing import cast

from redis.asyncio import Redis
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Run
from bot.slack import escape as esc
from bot.slack import messages as msg
from bot.slack import render
from bot.slack.call import free_item, free_line
from bot.store import keys

log = logging.getLogger(__name__)

CARD_TS = "card_ts"  # the run card the bot posted for /hitl run (a mention's run has none)
FREE_TS = "free_ts"  # the thread line that lists the latest burst of calls without review
FREE_CALLS = "free_calls"  # that line's calls, as JSON [[request id, line], ...]
LINK = "link"  # the permalink of the run's thread, for `hitl-bot show RUN_ID`
FOLD_MAX = 12  # calls per folded line; the next one starts a new line


def card_elsewhere(req: ActionRequest, channel: str, permalink: str) -> str:
    """The thread's line for a card posted in another channel (the tier's reviewers')."""
    link = msg.SL_CARD_LINK.format(url=permalink) if permalink.startswith("https://") else ""
    return msg.SL_CARD_ELSEWHERE.format(
        tool=esc.code(req.tool), risk=req.risk.value.upper(), channel=channel, link=link
    )


class RunLines:
    def __init__(self, redis: Redis, client: AsyncWebClient) -> None:
        self.redis = redis
        self.client = client

    async def free_call(self, run: Run, req: ActionRequest) -> None:
        """Add `req` to the thread's current line of calls without review, or start one."""
        if not run.channel or not run.thread_ts:
            return
        key = keys.run(run.id)
        got = cast(list[str | None], await self.redis.hmget(key, [FREE_TS, FREE_CALLS]))
        ts, calls = got[0], json.loads(got[1] or "[]")
        if any(rid == req.id for rid, _ in calls):
            return  # a retried notice: the line already lists it
        if ts and len(calls) < FOLD_MAX:
            calls.append([req.id, free_item(req)])
            text = free_line([line for _, line in calls])
            await self.client.chat_update(channel=run.channel, ts=ts, text=text)
        else:
            calls = [[req.id, free_item(req)]]
            resp = await self.client.chat_postMessage(
                channel=run.channel,
                thread_ts=run.thread_ts,
                text=free_line([calls[0][1]]),
                unfurl_links=False,
            )
            ts = str(resp["ts"])
        await self.redis.hset(key, mapping={FREE_TS: ts, FREE_CALLS: json.dumps(calls)})

    async def said_other(self, run_id: str | None) -> None:
        """Another line went into the thread: the next free call starts a new line, so
        the thread still reads in the order things happened."""
        if run_id:
            await self.redis.hdel(keys.run(run_id), FREE_TS, FREE_CALLS)

    async def card_posted(self, run: Run, ts: str) -> None:
        await self.redis.hset(keys.run(run.id), CARD_TS, ts)

    async def remember_link(self, run_id: str, channel: str, thread_ts: str) -> None:
        """Record the thread's permalink once, for the operator's CLI. A refusal (a
        missing scope, a deleted message) leaves the CLI showing channel and ts."""
        try:
            got = await self.client.chat_getPermalink(channel=channel, message_ts=thread_ts)
        except SlackApiError as exc:
            log.info("no permalink for run %s: %s", run_id, exc.response.get("error"))
            return
        if got.get("permalink"):
            await self.redis.hset(keys.run(run_id), LINK, str(got["permalink"]))

    async def refresh_card(self, run: Run) -> None:
        """Bring the run card (if the bot posted one) to the run's current state."""
        ts = await self.redis.hget(keys.run(run.id), CARD_TS)
        if not ts or not run.channel:
            return
        head = render.run_header(run)
        await self.client.chat_update(
            channel=run.channel, ts=str(ts), text=head.text, blocks=head.blocks
        )
