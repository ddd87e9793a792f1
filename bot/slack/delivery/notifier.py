"""Turns the event stream into Slack messages: posts, updates, thread lines, DMs, reactions.

Every handler renders from the item's *current* state, so handling an event
twice or late converges on the same message. An event is acknowledged only
after Slack took it; one that failed stays pending and is claimed again after
`retry_idle_ms` — the stream is the outbox.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Run
from bot.core.policy import Policy
from bot.core.states import State
from bot.db.failures import StoreError, is_missing_group
from bot.db.lease import Lease
from bot.errors import NotFound, NotReplicated
from bot.slack.access.groups import channel_id
from bot.slack.blocks import lines, render, views
from bot.slack.delivery.escalations import EscalationPosts
from bot.slack.delivery.once import OncePoster, Posted, Tag
from bot.slack.delivery.refusals import REFUSAL_BACKOFF, Refusals
from bot.slack.delivery.runlines import RunLines, card_elsewhere
from bot.slack.delivery.threadposts import DEFAULT_CHANNEL, EVENT_AT, ThreadPosts
from bot.slack.seams import CardPart, Tools
from bot.store.posted.parked import why_of
from bot.store.run.runs import RunStore
from bot.store.stores import StoreSet
from bot.store.stream.events import NOTIFIER_GROUP, Notice
from bot.supervise import Backoff

log = logging.getLogger(__name__)

# One notifier works on an entry at a time, even if another reclaims it. The holder keeps
# the lease alive while it works, so a dead notifier's entries are free again within
# LEASE_S rather than after the longest a delivery could ever take.
LEASE_S = 10


class Notifier:
    def __init__(
        self,
        rt: StoreSet,
        runs: RunStore,
        client: AsyncWebClient,
        *,
        consumer: str,
        retry_idle_ms: int = 15_000,
        pager: httpx.AsyncClient | None = None,
        policy: Policy | None = None,
        block_ms: int = 1_000,
        refusal_backoff: Backoff = REFUSAL_BACKOFF,
        parts: Sequence[Callable[[Tools], CardPart]] = (),
    ) -> None:
        """`parts`: the registered features' parts of the card flow
        (bot/slack/features.py), called in this order at each point."""
        self.rt = rt
        self.block_ms = block_ms
        self.runs = runs
        self.client = client
        self.consumer = consumer
        self.retry_idle_ms = retry_idle_ms
        self.bus = rt.bus(NOTIFIER_GROUP)
        self.pager = pager or httpx.AsyncClient(timeout=10)
        self.delivered = 0
        self.failures = 0
        self._lanes = asyncio.Semaphore(8)
        self.once = OncePoster(rt, client)
        self.escalations = EscalationPosts(rt, client, self.once, self.pager)
        self.lines = RunLines(rt.cards, client)
        tools = Tools(rt, client, self.once, policy, consumer)
        self.parts = [make(tools) for make in parts]
        self.threads = ThreadPosts(rt, runs, client, self.once, self.lines)
        self.refusals = Refusals(rt, runs, client, self.threads.say, backoff=refusal_backoff)

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set. A Redis error raises: run it under a Supervisor
        (bot/supervise.py), which logs it once and starts this again after a backoff;
        undelivered entries stay pending in the stream meanwhile."""
        await self.bus.ensure_group()
        while not stop.is_set():
            try:
                batch = await self.bus.reclaim(self.consumer, min_idle_ms=self.retry_idle_ms)
                batch += await self.bus.read(
                    self.consumer, block_ms=min(200, self.block_ms) if batch else self.block_ms
                )
            except StoreError as exc:
                if not is_missing_group(exc):
                    raise
                # The group vanished (a flushed or replaced Redis): make it again.
                await self.bus.ensure_group()
                continue
            await self._deliver_all(batch)

    async def _deliver_all(self, batch: list[Notice]) -> None:
        """Different runs (or items outside a run) in parallel, each in order.

        One slow item (Slack rate-limiting a method, a pager timing out) must not
        hold up every other approval message behind it.
        """
        groups: dict[tuple[str, str], list[Notice]] = {}
        # Entry ids are times: across the shards' streams they give the order
        # things happened in, which is the order a run's thread must show them.
        for notice in sorted(batch, key=_when):
            groups.setdefault(_lane(notice), []).append(notice)

        async def in_order(items: list[Notice]) -> None:
            async with self._lanes:
                for notice in items:
                    if not await self.deliver(notice):
                        return  # keep order: later events of this item wait for the retry

        await asyncio.gather(*(in_order(items) for items in groups.values()))

    async def deliver(self, n: Notice) -> bool:
        lease = self.rt.notice_lease(n, self.consumer, LEASE_S)
        if not await lease.take():
            return False
        async with lease.kept():
            done = await self._deliver(n, lease)
        if not done and (wait_ms := self.refusals.hold_ms(n)) is not None:
            await lease.hold(wait_ms)  # Slack refused it: nobody tries it again before then
        return done

    async def _deliver(self, n: Notice, lease: Lease) -> bool:
        try:
            await self.rt.confirm_saved(n)
            await self.handle(n)
        except SlackApiError as exc:
            status = exc.response.status_code
            if status != 429 and status < 500:
                # Slack said no. Kept (and held for a backoff) unless no retry can fix it:
                # a card refused until the bot is invited is never lost (issue 42).
                if not await self.refusals.refused(n, exc):
                    return False
                await self.bus.ack(n)
                return True
            return await self._retry_later(n, lease, exc)
        except (httpx.HTTPError, OSError, StoreError, NotReplicated) as exc:
            return await self._retry_later(n, lease, exc)
        except NotFound:
            # The item is gone (a failover lost it before a replica had it, or it was
            # deleted): retrying would hold up its lane for good, so drop the notice.
            log.warning("notice of a %s the store no longer has: %s %s", n.kind, n.id, n.event)
            await self.bus.ack(n)
            return True
        except Exception as exc:
            # Not Slack, not the store: a bug, or a record no card can show. It would raise
            # on every retry, and held pending it stalled every card behind it (issue 41).
            log.error(
                "parked %s %s %s: no message could be drawn", n.kind, n.id, n.event, exc_info=exc
            )
            await self.rt.park_notice(n, NOTIFIER_GROUP, why_of(exc))
            return True
        await self.bus.ack(n)
        self.delivered += 1
        await self.refusals.delivered(n)
        return True

    async def _retry_later(self, n: Notice, lease: Lease, exc: Exception) -> bool:
        """Leave the entry pending: it is claimed again after `retry_idle_ms`."""
        self.failures += 1
        log.warning("slack delivery of %s %s %s failed, will retry: %s", n.kind, n.id, n.event, exc)
        await lease.release()
        return False

    async def handle(self, n: Notice) -> None:
        EVENT_AT.set(_when(n)[0])  # this lane's task only: lanes run side by side
        if n.kind == "request":
            await self._request(n)
            for part in self.parts:  # after its own card, which a digest links
                await part.after(n.id)
        elif n.kind == "question":
            await self.threads.question(n)
        elif n.kind == "steer":
            emoji = "eyes" if n.event == "queued" else "white_check_mark"
            await self.threads.react(n.fields.get("source", ""), emoji)
        elif n.kind == "run":
            await self.threads.run(n)

    # -- requests ---------------------------------------------------------------

    async def _placement(self, req: ActionRequest, run: Run | None) -> tuple[str, str | None]:
        """Where the card goes: always its tier's review channel (the one the request
        names, or its level's first), where the tier's reviewers look. In the run's
        thread (the second value) only if the run lives in that very channel: a run's
        own channel is no review route."""
        where = req.channel or _first_channel(req) or DEFAULT_CHANNEL
        if run is None or not run.channel or not run.thread_ts:
            return where, None
        if await channel_id(self.rt.slack, self.client, where) == run.channel:
            return run.channel, run.thread_ts
        return where, None

    async def _link(self, run: Run, req: ActionRequest, card: Posted, *, adopted: bool) -> None:
        """Tell the run's thread where its card is, since it is not in the thread."""
        if adopted:
            return  # an earlier attempt posted the card, and linked it if it got that far
        link = ""
        try:
            got = await self.client.chat_getPermalink(channel=card.channel, message_ts=card.ts)
            link = str(got.get("permalink") or "")
        except SlackApiError as exc:
            log.info("no permalink for the card of %s: %s", req.id, exc.response.get("error"))
        await self.threads.say(
            str(run.channel), str(run.thread_ts), card_elsewhere(req, card.channel, link)
        )

    async def _passed(self, req: ActionRequest, run: Run | None, where: str) -> None:
        """A call that needed no card: its note, or its place in the run's line of calls
        without review."""
        for part in self.parts:
            if await part.passed(req, run, where):
                return
        if run is not None:
            await self.lines.free_call(run, req, at=EVENT_AT.get())

    async def _request(self, n: Notice) -> None:
        req = await self.rt.requests.get(n.id)
        ref = await self.rt.cards.request_card(req.id)
        channel, ts, intent = ref.channel, ref.ts, ref.extra
        run = await self.threads.run_of(req.run_id)
        title = run.prompt if run is not None and run.outside and run.prompt else None
        where, run_thread = await self._placement(req, run)
        if not ts and intent is not None and req.state != State.PENDING_REVIEW:
            # An attempt died mid-post and the request moved on since: its card, if Slack
            # took it, still shows buttons. Find it so the update below takes them away.
            found = await self.once.find(
                Tag("request", req.id, "card"), where, run_thread, intent_ms=int(intent)
            )
            if found is not None:
                channel, ts = found
                await self._save_card(req.id, Posted(*found, adopted=True), run_thread, None)
            else:  # never posted; and with the request decided, never will be
                await self.rt.cards.drop_intent(self.rt.cards.request_intent(req.id))
        if not ts and (req.state == State.PENDING_REVIEW or n.event == "create"):
            if n.event == "create":  # inside a live grant: passed, no card
                req = await self._on_new(req)
            if req.state != State.PENDING_REVIEW:  # approved by policy or grant: no buttons
                await self._passed(req, run, where)
                return
            msg = render.approval_message(req, now_ms=self.rt.clock(), run_title=title)
            msg = await self._decorated(msg, req)
            card = await self.once.post(
                Tag("request", req.id, "card"),
                self.rt.cards.request_intent(req.id),
                channel=where,
                thread_ts=run_thread,
                text=msg.text,
                blocks=msg.blocks,
                unfurl_links=False,
                unfurl_media=False,
            )
            if card.adopted:  # posted before a crash, from a state that may be gone
                await self.client.chat_update(
                    channel=card.channel, ts=card.ts, text=msg.text, blocks=msg.blocks
                )
            await self._save_card(req.id, card, run_thread, render.blocks_hash(msg.blocks))
            if run is not None and run.channel and run.thread_ts and run_thread is None:
                await self._link(run, req, card, adopted=card.adopted)
            elif run is not None and run.outside and not run.thread_ts:
                # An outside agent's run has no header post: its first card's thread is
                # its home, where its later cards go and replies steer it.
                await self.runs.set_home(run.id, card.channel, card.ts)
                await self.lines.remember_link(run.id, card.channel, card.ts)  # App Home
            return
        posted: set[str] = set()
        if n.event == "timeout" and n.state == State.PENDING_REVIEW.value:
            # First: telling the next level matters more than tidying the old message.
            posted = await self.escalations.escalate(req, channel, run_thread or ts)
        if channel and ts:
            msg = render.approval_message(req, now_ms=self.rt.clock(), run_title=title)
            msg = await self._decorated(msg, req)
            await self.client.chat_update(channel=channel, ts=ts, text=msg.text, blocks=msg.blocks)
            await self.rt.cards.set_request_view(req.id, render.blocks_hash(msg.blocks))
        # Every escalation DM and channel post shows the request too: none keeps stale
        # buttons or an old level once something happened. Before the thread line, so a
        # failure here retries the whole notice without saying the line twice.
        await self.escalations.refresh(req, skip=posted)
        await self.escalations.paging.resolve(req)  # nobody need be woken for it any more
        await self._close_modals(req)
        if channel and ts:
            # The line says what this event did, not where the request is by now.
            then = req.model_copy(update={"state": State(n.state)}) if n.state else req
            await self.threads.say(channel, run_thread or ts, lines.status_line(then, n.event))

    async def _on_new(self, req: ActionRequest) -> ActionRequest:
        """A new request as the features leave it: one may have passed it (a grant)."""
        for part in self.parts:
            req = await part.on_new(req)
        return req

    async def _decorated(self, msg: render.Rendered, req: ActionRequest) -> render.Rendered:
        """The card with what each feature adds to it."""
        for part in self.parts:
            msg = render.decorate(msg, await part.extra(req))
        return msg

    async def _close_modals(self, req: ActionRequest) -> None:
        """Turn the Edit, Reject and payload modals still open on the request into a
        notice that it was decided: Slack keeps a modal open until the person closes it,
        and one left as it was would offer to decide a call that is settled."""
        if req.state == State.PENDING_REVIEW:
            return
        for view_id, callback_id in (await self.rt.cards.take_open_views(req.id)).items():
            make = STALE_MODALS.get(callback_id)
            if make is None:
                continue
            try:
                await self.client.views_update(view_id=view_id, view=make(req))
            except SlackApiError as exc:  # closed by the person already: nothing to do
                log.info(
                    "modal %s of %s not updated: %s", view_id, req.id, exc.response.get("error")
                )

    async def _save_card(
        self, rid: str, card: Posted, run_thread: str | None, view: str | None
    ) -> None:
        # the thread a reply to this card lands in: the run's, or the card's own
        await self.rt.threads.add_card(card.channel, run_thread or card.ts, rid)
        # A card adopted after a crash was posted at a time unknown: fatigue figures then
        # time its decision from the request's creation (bot/core/hindsight/fatigue.py).
        at = None if card.adopted else self.rt.clock()
        await self.rt.cards.save_request_card(rid, card.channel, card.ts, view, at=at)


STALE_MODALS: dict[str, Callable[[ActionRequest], dict[str, Any]]] = {
    render.VIEW_EDIT: views.edit_modal,
    render.VIEW_REJECT: views.reject_modal,
    render.VIEW_PAYLOAD: views.payload_modal,
}


def _when(n: Notice) -> tuple[int, int]:
    ms, _, seq = n.entry_id.partition("-")
    return int(ms), int(seq or 0)


def _lane(n: Notice) -> tuple[str, str]:
    """One lane per run (its thread reads in order), else per item."""
    run = n.id if n.kind == "run" else n.fields.get("run") or n.fields.get("run_id")
    return ("run", run) if run else (n.kind, n.id)


def _first_channel(req: ActionRequest) -> str | None:
    chans = req.assignees.channels
    return chans[0] if chans else None
