"""The digest's "Approve all" and "Reject all": each call it showed decided on its own.

A click names a drawing (its view hash), never a live list: exactly the calls that
drawing showed are decided, each through the request's own sealed transition, at the
version and payload hash shown, audited with the drawing's view hash as what the person
saw. A call that moved since (decided, escalated, edited) is left out and named; one
the person may not decide is refused by the store, audited like a refused click on its
card, and named too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.async_app import AsyncBoltContext as BoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Decision
from bot.core.states import Event, State
from bot.db.failures import STORE_DOWN
from bot.errors import AlreadyResolved, Expired, HitlError, NotEligible, NotFound, StalePayload
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.access.permissions import actor_team, is_foreign
from bot.slack.batch import card
from bot.slack.batch import messages as bm
from bot.slack.blocks import escape as esc
from bot.slack.blocks import lines, views
from bot.slack.listeners.approvals import MAX_REASON, Approvals, open_view, refusal_text, tell

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    decided: int = 0
    changed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def text(self, event: Event, total: int, tool: str) -> str:
        done = bm.DONE_REJECT if event == Event.REJECT else bm.DONE_APPROVE
        out = [done.format(n=self.decided, total=total, tool=esc.code(tool, 80))]
        if self.changed:
            out.append(bm.LEFT_CHANGED.format(items=", ".join(self.changed)))
        if self.refused:
            out.append(bm.LEFT_REFUSED.format(items=", ".join(self.refused)))
        if self.failed:
            out.append(bm.LEFT_FAILED.format(items="; ".join(self.failed)))
        return esc.truncate("\n".join(out), esc.MESSAGE_TEXT)


def _item(s: card.Shown, why: str) -> str:
    """`why`: already escaped (the templates above, or a refusal's own text)."""
    return bm.ITEM.format(link=_label(s), why=why)


def _changed(req: ActionRequest, s: card.Shown) -> str | None:
    """Why the request is no longer the call the drawing showed (None: it still is)."""
    if req.state != State.PENDING_REVIEW:
        res = req.resolution
        if res is not None and res.event.value in bm.HOW:
            how = bm.HOW[res.event.value]
            return bm.WHY_DECIDED_BY.format(how=how, actor=esc.user(res.actor))
        return bm.WHY_DECIDED.format(state=req.state.value)
    if req.original_hash or req.payload_hash != s.payload_hash:
        return bm.WHY_EDITED
    if req.version != s.version:
        return bm.WHY_ESCALATED if req.level > 0 else bm.WHY_CHANGED
    return card.unbatchable(req)


class Batch:
    def __init__(self, rt: Runtime, approvals: Approvals) -> None:
        self.rt = rt
        self.approvals = approvals

    def register(self, app: AsyncApp) -> None:
        app.action(card.ACTION_APPROVE_ALL)(self.on_approve_all)
        app.action(card.ACTION_REJECT_ALL)(self.on_reject_all)
        app.view(card.VIEW_REJECT_ALL)(self.on_reject_submit)

    async def _drawing(
        self, value: str
    ) -> tuple[str, str, list[card.Shown] | None, dict[str, str]]:
        group, vh = card.DigestValue.decode(value)
        rows = await self.rt.digests.view(group, vh)
        meta = await self.rt.digests.meta(group)
        return group, vh, None if rows is None else [card.Shown.of(r) for r in rows], meta

    async def on_approve_all(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        await ack()
        user = body["user"]["id"]
        try:
            group, vh, shown, meta = await self._drawing(_value(body))
        except ValueError:
            await _say(client, body, None, smsg.BAD_BUTTON)
            return
        channel = meta.get("channel")
        if shown is None:
            await _say(client, body, channel, bm.STALE_VIEW)
            return
        approve = Decision(event=Event.APPROVE, via=f"digest:{group}")
        foreign = is_foreign(actor_team(body), context)
        out = await self.decide_all(client, user, shown, vh, approve, foreign=foreign)
        text = out.text(Event.APPROVE, len(shown), meta.get("tool", ""))
        await _say(client, body, channel, text)

    async def on_reject_all(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        value = _value(body)
        try:
            _, _, shown, meta = await self._drawing(value)
        except ValueError:
            await _say(client, body, None, smsg.BAD_BUTTON)
            return
        if shown is None:
            await _say(client, body, meta.get("channel"), bm.STALE_VIEW)
            return
        tool, who = meta.get("tool", ""), meta.get("requester", "")
        await open_view(client, body, card.reject_modal(value, len(shown), tool, who))

    async def on_reject_submit(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        view = body["view"]
        value = str(view.get("private_metadata", ""))
        code, text = views.parse_reject(view["state"]["values"])
        if text is not None and len(text) > MAX_REASON:
            errors = {views.REASON_TEXT_BLOCK: smsg.REASON_TOO_LONG.format(limit=MAX_REASON)}
            await ack(response_action="errors", errors=errors)
            return
        if not code:
            await ack(
                response_action="errors", errors={views.REASON_BLOCK: smsg.REASON_REQUIRED_SHORT}
            )
            return
        try:
            group, vh, shown, meta = await self._drawing(value)
        except ValueError:
            await ack(response_action="errors", errors={views.REASON_BLOCK: smsg.BAD_BUTTON})
            return
        if shown is None:
            await ack(response_action="errors", errors={views.REASON_BLOCK: bm.STALE_VIEW})
            return
        await ack()
        user = body["user"]["id"]
        reject = Decision(event=Event.REJECT, reason_code=code, text=text, via=f"digest:{group}")
        foreign = is_foreign(actor_team(body), context)
        out = await self.decide_all(client, user, shown, vh, reject, foreign=foreign)
        channel = meta.get("channel")
        if channel:
            said = out.text(Event.REJECT, len(shown), meta.get("tool", ""))
            await tell(client, channel=channel, user=user, text=said)

    async def decide_all(
        self,
        client: AsyncWebClient,
        user: str,
        shown: list[card.Shown],
        vh: str,
        decision: Decision,
        *,
        foreign: bool,
    ) -> Outcome:
        out = Outcome()
        for s in shown:
            try:
                req = await self.rt.requests.get(s.id)
            except NotFound:
                out.changed.append(_item(s, bm.WHY_GONE))
                continue
            except STORE_DOWN:  # say which were not decided, rather than nothing at all
                out.failed.append(_item(s, lines.refusal("store_down")))
                continue
            why = _changed(req, s)
            if why is not None:
                out.changed.append(_item(s, why))
                continue
            if decision.event != Event.REJECT and card.hidden(req):
                # No drawing offers "Approve all" over a row that hides arguments: a
                # click naming one anyway (a forged value) approves none of those.
                out.failed.append(_item(s, bm.WHY_HIDDEN))
                continue
            d = decision.model_copy(update={"payload_hash": s.payload_hash})
            try:
                moved = await self.approvals.decide(
                    client, user, s.id, d, foreign=foreign, view_hash=vh, expect_version=s.version
                )
            except NotEligible:
                out.refused.append(_label(s))
                continue
            except (AlreadyResolved, Expired, StalePayload) as exc:
                out.changed.append(_item(s, _short(exc)))
                continue
            except HitlError as exc:
                out.failed.append(_item(s, _short(exc)))
                continue
            if moved.noop and not moved.repeat:
                out.changed.append(_item(s, bm.WHY_CHANGED))
            else:
                out.decided += 1
        log.info(
            "batch decision",
            extra={
                "actor": user,
                "view_hash": vh,
                "event": decision.event.value,
                "decided": out.decided,
                "shown": len(shown),
            },
        )
        return out


def _label(s: card.Shown) -> str:
    """The request's id, linking to its card when Slack gave a link."""
    return f"<{s.link}|{s.id}>" if card.LINK.fullmatch(s.link) else esc.code(s.id, 80)


def _short(exc: HitlError) -> str:
    return esc.truncate(refusal_text(exc), 200)


def _value(body: dict[str, Any]) -> str:
    return str(body["actions"][0].get("value", ""))


async def _say(
    client: AsyncWebClient, body: dict[str, Any], channel: str | None, text: str
) -> None:
    where = (
        channel
        or (body.get("channel") or {}).get("id")
        or (body.get("container") or {}).get("channel_id")
    )
    if where:
        await tell(client, channel=where, user=body["user"]["id"], text=text)
