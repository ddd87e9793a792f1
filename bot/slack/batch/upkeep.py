"""Keeps each digest card in step with the requests it lists; called by the notifier
after every request event, once that request's own card is in Slack.

Redraws of one group never run side by side, in this process or another: a notifier
marks the group dirty, then redraws while it holds the group's lease and finds it
dirty. One that finds the lease taken leaves the mark for the holder, who looks for
it again after giving the lease back, so no change goes undrawn.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest
from bot.core.states import State
from bot.errors import NotFound
from bot.slack.batch import card
from bot.slack.escape import Block
from bot.slack.once import OncePoster, Tag
from bot.slack.render import blocks_hash
from bot.store.digests import group_id
from bot.store.stores import StoreSet

log = logging.getLogger(__name__)

LEASE_S = 10


class DigestKeeper:
    def __init__(
        self, rt: StoreSet, client: AsyncWebClient, once: OncePoster, *, holder: str
    ) -> None:
        self.rt = rt
        self.digests = rt.digests
        self.client = client
        self.once = once
        self.holder = holder

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
                await self.digests.join(group, rid, link, meta)
        elif not await self.digests.has(group, rid):
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

    async def _waiting(self, group: str) -> tuple[list[ActionRequest], dict[str, str]]:
        members = await self.digests.members(group)
        waiting: list[ActionRequest] = []
        gone: list[str] = []
        rids = list(members)
        for rid, req in zip(rids, await self.rt.requests.get_many(rids), strict=True):
            if req is not None and req.state == State.PENDING_REVIEW:
                waiting.append(req)
            else:
                gone.append(rid)
        await self.digests.leave(group, gone)
        waiting.sort(key=lambda r: (r.created_at, r.id))
        return waiting, members

    async def _draw(self, group: str) -> None:
        meta = await self.digests.meta(group)
        channel = meta.get("channel", "")
        waiting, links = await self._waiting(group)
        ref, shows = await self.digests.card(group)
        ts = ref.ts
        if not ts and ref.extra is not None:  # an attempt died mid-post: find its message
            found = await self.once.find(
                Tag("digest", group, "card"), channel, None, intent_ms=int(ref.extra)
            )
            if found is not None:
                await self.digests.save_card(group, *found)
                ts = found[1]
        if len(waiting) < card.MIN_BATCH:
            if ts:
                done = card.closed_message(meta.get("tool", ""), meta.get("requester", ""))
                await self._update(channel, ts, done.text, done.blocks)
            await self.digests.forget_card(group)
            return
        msg, shown = card.digest_message(waiting, links, group)
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
