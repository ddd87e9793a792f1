"""Keeps each digest card in step with the requests it lists; called by the notifier
after every request event, once that request's own card is in Slack.

A redraw reads the group's index (its count and the oldest rows it shows) and those
rows, so its cost does not grow with the backlog. Redraws of one group are coalesced
and never run side by side, in this process or another: a notifier marks the group
dirty, then redraws while it holds the group's lease and finds it dirty. One that
finds the lease taken leaves the mark for the holder, who looks for it again after
giving the lease back, so no change goes undrawn.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest
from bot.core.states import State
from bot.errors import NotFound
from bot.slack.batch import card
from bot.slack.blocks.escape import Block
from bot.slack.blocks.render import blocks_hash
from bot.slack.delivery.once import OncePoster, Tag
from bot.slack.seams import CardPart
from bot.store.posted.digests import group_id
from bot.store.stores import StoreSet

log = logging.getLogger(__name__)

LEASE_S = 10


class DigestKeeper(CardPart):
    """The batch digest's part of the card flow (bot/slack/seams.py): every request's
    notice, after its own card, enrols or redraws it in its group's digest."""

    def __init__(
        self, rt: StoreSet, client: AsyncWebClient, once: OncePoster, *, holder: str
    ) -> None:
        self.rt = rt
        self.digests = rt.digests
        self.client = client
        self.once = once
        self.holder = holder

    async def after(self, rid: str) -> None:
        await self.touch(rid)

    async def touch(self, rid: str) -> None:
        """The request `rid` changed: enrol it in its group if it waits, and redraw."""
        try:
            req = await self.rt.requests.get(rid)
        except NotFound:
            return
        ref = await self.rt.cards.request_card(rid)
        if not ref.channel or not ref.ts:
            return  # never carded (decided by policy): in no digest
        if req.candidates:
            return  # a proposal needs someone to choose among its calls: never batched
        group = group_id(ref.channel, req.requester, req.tool)
        if req.state == State.PENDING_REVIEW:
            if not await self.digests.has(group, rid):
                link = await self._permalink(ref.channel, ref.ts)
                meta = {"channel": ref.channel, "requester": req.requester, "tool": req.tool}
                await self.digests.join(group, rid, req.created_at, link, meta)
        elif await self.digests.has(group, rid):
            await self.digests.leave(group, [rid])  # kept at decide time: the index is exact
        else:
            return  # never waited in a group: nothing to redraw
        await self.redraw(group)

    async def redraw(self, group: str) -> None:
        await self.digests.mark_dirty(group)
        lease = self.digests.lease(group, self.holder, LEASE_S)
        while await lease.take():
            try:
                async with lease.kept():
                    while await self.digests.take_dirty(group):
                        await self._draw(group)
            finally:
                await lease.release()
            if not await self._still_dirty(group):
                return

    async def _still_dirty(self, group: str) -> bool:
        if await self.digests.take_dirty(group):
            await self.digests.mark_dirty(group)  # put back: whoever takes the lease draws
            return True
        return False

    async def _waiting(self, group: str) -> tuple[list[ActionRequest], int, dict[str, str]]:
        """The oldest calls waiting (at most a drawing's rows), how many wait in all, and
        the links of those shown: reads the index and the rows drawn, whatever the backlog.
        A listed call found decided (its own notice not yet here) leaves the index, and the
        next ones move up."""
        await self._index_older_members(group)
        while True:
            rids = await self.digests.oldest(group, card.MAX_ROWS)
            reqs = await self.rt.requests.get_many(rids)
            gone = [
                rid
                for rid, req in zip(rids, reqs, strict=True)
                if req is None or req.state != State.PENDING_REVIEW
            ]
            if not gone:
                break
            await self.digests.leave(group, gone)
        waiting = [r for r in reqs if r is not None]
        return waiting, await self.digests.size(group), await self.digests.links(group, rids)

    async def _index_older_members(self, group: str) -> None:
        """A group kept by an older release has members but no index: list them once."""
        rids = await self.digests.unindexed(group)
        if rids:
            reqs = await self.rt.requests.get_many(rids)
            await self.digests.index(group, {r.id: r.created_at for r in reqs if r is not None})

    async def _draw(self, group: str) -> None:
        meta = await self.digests.meta(group)
        channel = meta.get("channel", "")
        waiting, count, links = await self._waiting(group)
        ref, shows = await self.digests.card(group)
        ts = ref.ts
        if not ts and ref.extra is not None:  # an attempt died mid-post: find its message
            found = await self.once.find(
                Tag("digest", group, "card"), channel, None, intent_ms=int(ref.extra)
            )
            if found is not None:
                await self.digests.save_card(group, *found)
                ts = found[1]
        if count < card.MIN_BATCH or len(waiting) < card.MIN_BATCH:
            if ts:
                done = card.closed_message(meta.get("tool", ""), meta.get("requester", ""))
                await self._update(channel, ts, done.text, done.blocks)
            await self.digests.forget_card(group)
            return
        msg, shown = card.digest_message(waiting, links, group, waiting=count)
        drawn = blocks_hash(msg.blocks)
        if ts and drawn == shows:
            return  # nothing it shows changed (a retried notice, say): Slack is spared
        # Saved before Slack shows it, so a click on it always finds what it showed.
        await self.digests.save_view(group, card.view_hash(shown), [s.row() for s in shown])
        if ts:
            await self._update(channel, ts, msg.text, msg.blocks)
            await self.digests.set_shows(group, drawn)
            return
        posted = await self.once.post(
            Tag("digest", group, "card"),
            self.digests.intent(group),
            channel=channel,
            text=msg.text,
            blocks=msg.blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        if posted.adopted:
            await self._update(posted.channel, posted.ts, msg.text, msg.blocks)
        await self.digests.save_card(group, posted.channel, posted.ts, drawn)

    async def _update(self, channel: str, ts: str, text: str, blocks: list[Block]) -> None:
        await self.client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)

    async def _permalink(self, channel: str, ts: str) -> str:
        try:
            got = await self.client.chat_getPermalink(channel=channel, message_ts=ts)
        except SlackApiError as exc:
            log.info("no permalink for a card in %s: %s", channel, exc.response.get("error"))
            return ""
        return str(got.get("permalink") or "")
