"""Escalation posts: the DMs and channel posts that tell the next level about a request.

Each post is recorded under its slot (bot/store/posted/cards.py) as soon as Slack took
it, posted once even across a crash (`once.py`), and brought up to the request's state
by every later notice, so none keeps stale buttons or an old level.
"""

from __future__ import annotations

import logging

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest
from bot.core.states import State
from bot.paging.pager import Pager
from bot.slack.blocks import render
from bot.slack.delivery.once import OncePoster, Tag
from bot.store.stores import StoreSet

log = logging.getLogger(__name__)


class EscalationPosts:
    def __init__(
        self, rt: StoreSet, client: AsyncWebClient, once: OncePoster, pager: httpx.AsyncClient
    ) -> None:
        self.rt = rt
        self.client = client
        self.once = once
        self.paging = Pager(rt, client, pager)

    async def escalate(
        self, req: ActionRequest, channel: str | None, thread: str | None
    ) -> set[str]:
        """Tell the level the request just reached; the slots of the messages posted now.

        Each message is recorded as soon as Slack took it, so a retry of this notice
        (a later post or the page failed) posts only what is still missing.
        """
        cards = self.rt.cards
        done = await cards.posts(req.id)
        if f"{req.level}:done" in done or req.state != State.PENDING_REVIEW:
            return set()  # a retry after it all went out, or decided before we got here
        # The page first: waking the on-call engineer must not wait on, or be lost with,
        # a Slack post that fails (one Slack refuses for good drops the notice).
        await self.paging.trigger(req)
        level = req.assignees
        msg = render.escalation_message(req, now_ms=self.rt.clock())
        posted: set[str] = set()
        targets = [(f"{req.level}:user:{u}", u, True) for u in level.users]
        targets += [(f"{req.level}:channel:{c}", c, False) for c in level.channels if c != channel]
        for slot, where, is_user in targets:
            if slot in done:
                continue
            if is_user:
                dm = await self.client.conversations_open(users=where)
                where = dm["channel"]["id"]
            post = await self.once.post(
                Tag("request", req.id, slot),
                cards.post_intent(req.id, slot),
                channel=where,
                text=msg.text,
                blocks=msg.blocks,
                unfurl_links=False,
            )
            await cards.save_post(req.id, slot, post.channel, post.ts)
            if not post.adopted:  # an adopted one is brought up to date with the others
                posted.add(slot)
        await cards.level_done(req.id, req.level)
        return posted

    async def refresh(self, req: ActionRequest, skip: set[str]) -> None:
        """Bring every escalation message of `req` to its current state (no buttons once
        decided). Idempotent: a retried notice updates them to the same blocks."""
        posts = await self._adopt(req)
        msg = render.escalation_message(req, now_ms=self.rt.clock())
        for slot, ref in sorted(posts.items()):
            channel, _, ts = ref.partition(" ")
            if slot in skip or not ts:
                continue
            try:
                await self.client.chat_update(
                    channel=channel, ts=ts, text=msg.text, blocks=msg.blocks
                )
            except SlackApiError as exc:
                status = exc.response.status_code
                if status == 429 or status >= 500:
                    raise  # the outbox retries the notice
                # Gone for good (deleted, a reset workspace): the others still get updated.
                log.warning("escalation message %s of %s not updated: %s", slot, req.id, exc)

    async def _adopt(self, req: ActionRequest) -> dict[str, str]:
        """The escalation posts of `req`, with any that an attempt which died mid-post
        left behind (and that `escalate` will not retry: the request moved on) found."""
        posts = await self.rt.cards.posts(req.id)
        for field, started in list(posts.items()):
            slot = field.removesuffix(":posting")
            if slot == field or slot in posts:
                continue
            where = slot.split(":", 2)[-1]  # LEVEL:user:U123 or LEVEL:channel:#name
            found = await self.once.find(
                Tag("request", req.id, slot), where, None, intent_ms=int(started)
            )
            if found is not None:
                posts[slot] = f"{found[0]} {found[1]}"
            await self.rt.cards.settle_post(req.id, slot, found)
        return posts
