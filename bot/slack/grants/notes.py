"""The notifier's part of standing approvals: pass a new request a grant covers before
its card would be posted, say so in one line in the run's thread (or the review channel
when the call has no run thread), and draw the grant's parts of every card."""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.grants import grant_of
from bot.core.models import ActionRequest, Run
from bot.core.policy import Policy
from bot.core.states import State
from bot.errors import HitlError, NotFound
from bot.gate.grant_pass import pass_if_granted
from bot.slack.blocks import escape as esc
from bot.slack.blocks import render
from bot.slack.grants import messages as gmsg
from bot.slack.grants.card import card_extra
from bot.slack.seams import CardPart
from bot.store.stores import StoreSet


def passed_line(
    req: ActionRequest, gid: str, granter: str, left: int, uses: int, until: int
) -> str:
    return gmsg.NOTE_PASSED.format(
        tool=esc.code(req.tool),
        id=esc.code(req.id),
        gid=gid,
        granter=esc.user(granter),
        left=left,
        uses=uses,
        until=esc.date(until),
    )


class GrantNotes(CardPart):
    """Standing approvals' part of the card flow (bot/slack/seams.py)."""

    def __init__(self, rt: StoreSet, client: AsyncWebClient, policy: Policy | None) -> None:
        self.rt = rt
        self.client = client
        self.policy = policy

    async def on_new(self, req: ActionRequest) -> ActionRequest:
        """`req` approved under a grant that covers it, or as it was."""
        if self.policy is None:
            return req
        return await pass_if_granted(self.rt.requests, self.rt.grants, self.policy, req)

    async def passed(self, req: ActionRequest, run: Run | None, where: str) -> bool:
        """Post the one-line note of a call passed under a grant; False: it was not."""
        res = req.resolution
        gid = grant_of(res.reason_code if res else None)
        if res is None or gid is None:
            return False
        try:
            held = await self.rt.grants.get(gid)
        except NotFound:  # its record is kept 30 days past its end: an old notice
            return True
        g = held.grant
        text = passed_line(req, gid, res.actor, held.left, g.uses, g.expires_at)
        thread = run.thread_ts if run is not None and run.channel else None
        channel = run.channel if thread and run is not None and run.channel else where
        await self.client.chat_postMessage(
            channel=channel, thread_ts=thread, text=text, unfurl_links=False
        )
        if self.policy is not None:  # the card that made the grant shows what is left
            await redraw(self.rt, self.client, self.policy, held.grant.source)
        return True

    async def extra(self, req: ActionRequest) -> list[Any]:
        """The blocks a card shows of standing approvals now."""
        if self.policy is None:
            return []
        held = None
        if req.state != State.PENDING_REVIEW:
            held = await self.rt.grants.made_on(req.id)
        return card_extra(req, self.policy, held, self.rt.clock())


async def redraw(rt: StoreSet, client: AsyncWebClient, policy: Policy, rid: str) -> None:
    """Bring the card of `rid` up to date with the grant made on it (as the notifier
    draws cards): after the grant is made, used or revoked."""
    try:
        req = await rt.requests.get(rid)
        ref = await rt.cards.request_card(rid)
    except HitlError:
        return
    if not ref.channel or not ref.ts:
        return
    held = None if req.state == State.PENDING_REVIEW else await rt.grants.made_on(rid)
    msg = render.approval_message(req, now_ms=rt.clock())
    msg = render.decorate(msg, card_extra(req, policy, held, rt.clock()))
    await client.chat_update(channel=ref.channel, ts=ref.ts, text=msg.text, blocks=msg.blocks)
    await rt.cards.set_request_view(rid, render.blocks_hash(msg.blocks))
