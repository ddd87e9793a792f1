"""Listeners for the approval message: Approve, Reject, Edit, View, and their modals.

Every listener acks first (Slack wants an answer in 3 s) except the modal
submissions, whose answer carries the validation errors; those do only one
fast Redis round trip before answering.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.async_app import AsyncBoltContext as BoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages as msg
from bot.core.args.payload import MAX_ARGS_DEPTH
from bot.core.args.plainjson import text_too_deep
from bot.core.args.schema import problems
from bot.core.models import DETAIL_MAX, Decision
from bot.core.states import Event, State
from bot.db.failures import STORE_DOWN
from bot.errors import (
    AlreadyResolved,
    Expired,
    HitlError,
    NotEligible,
    NotFound,
    NotReplicated,
    StalePayload,
    StoreUnavailable,
)
from bot.gate.decide import decide
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.access.groups import groups_of, needs_lookup
from bot.slack.access.permissions import actor_team, is_foreign, may_decide, may_see
from bot.slack.blocks import escape as esc
from bot.slack.blocks import lines, render, views
from bot.slack.blocks.modal_errors import ForeignRefused, Names, fit, modal_refusal
from bot.slack.listeners.view_seal import seal_for
from bot.store.codec import from_hash
from bot.store.requests import Moved

log = logging.getLogger(__name__)

MAX_REASON = DETAIL_MAX  # `Decision.text`, and the reason input's max_length


def refusal_text(exc: HitlError) -> str:
    if isinstance(exc, AlreadyResolved):
        return lines.refusal("already_resolved", by=exc.by, at=exc.at, how=exc.how)
    if isinstance(exc, Expired):
        return lines.refusal("expired", detail=str(exc))
    if isinstance(exc, NotEligible) and exc.actor:
        return lines.refusal("not_eligible", actor=exc.actor, allowed=exc.allowed, own=exc.own)
    if isinstance(exc, NotEligible):
        return lines.refusal("not_eligible", detail=str(exc))
    if isinstance(exc, StalePayload):
        return lines.refusal("stale_payload", detail=str(exc))
    if isinstance(exc, NotReplicated):  # applied on the primary only: never "Approved"
        return lines.refusal("not_saved")
    if isinstance(exc, StoreUnavailable):
        return lines.refusal("store_down")
    return lines.refusal("invalid", detail=str(exc))


class Approvals:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.names = Names(store=rt.slack)

    async def decide(
        self,
        client: AsyncWebClient,
        user: str,
        request_id: str,
        decision: Decision,
        *,
        foreign: bool = False,
        view_hash: str | None = None,
        expect_version: int | None = None,
    ) -> Moved:
        """Apply a person's decision, resolving their groups and what they saw first.

        A member of another workspace (`foreign`) is no member of any of ours: no group
        or channel is looked up for them, and the machine does not count "*" for them.
        `view_hash`: what they saw when it was not the card (a digest's); with
        `expect_version`, a request moved since that version is left as it is (noop)."""
        try:
            h = await self.rt.requests.fields(request_id)
        except STORE_DOWN as exc:
            raise StoreUnavailable(msg.STORE_DOWN_DECISION) from exc
        approvers, levels = h["approvers"], h["levels"]
        groups: tuple[str, ...] = ()
        # only pay for Slack look-ups when a group or channel could make this person eligible
        if not foreign and any(f'"{c}' in approvers + levels for c in "SCG#"):
            candidates = from_hash(h).eligible()
            if needs_lookup(candidates):
                groups = await groups_of(self.rt.slack, client, user, candidates)
        d = decision.model_copy(
            update={
                "actor": user,
                "actor_groups": groups,
                "view_hash": view_hash or h.get("msg_view") or None,
                "foreign": foreign,
            }
        )
        try:
            moved = await decide(self.rt.requests, request_id, d, expect_version=expect_version)
        except STORE_DOWN as exc:  # a failover or a lost connection: say so, not nothing
            raise StoreUnavailable(msg.STORE_DOWN_DECISION) from exc
        except NotEligible as exc:
            if foreign and not exc.own:  # the store logged and audited it already
                why = msg.NOT_ELIGIBLE.format(actor=esc.user(user), why=smsg.WHY_FOREIGN)
                raise ForeignRefused(why, state=exc.state, event=exc.event) from None
            raise
        if not foreign and not moved.noop:
            # Who decided, and their groups, by name for the operator's CLI and report
            # (kept in the store; looked up at most once per CACHE_S, within a budget).
            await self.names.of(client, [user, *groups])
        return moved

    def register(self, app: AsyncApp) -> None:
        app.action(render.ACTION_APPROVE)(self.on_approve)
        app.action(render.ACTION_REJECT)(self.on_open(views.reject_modal))
        app.action(render.ACTION_EDIT)(
            self.on_open(views.edit_modal, shows_args=True, decides=True)
        )
        app.action(render.ACTION_VIEW)(self.on_open(views.payload_modal, shows_args=True))
        app.view(render.VIEW_REJECT)(self.on_reject)
        app.view(render.VIEW_EDIT)(self.on_edit)
        app.view(render.VIEW_PAYLOAD)(self.on_close)

    async def on_approve(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        await ack()
        user = body["user"]["id"]
        foreign = is_foreign(actor_team(body), context)
        try:
            rid, phash = render.ButtonValue.decode(body["actions"][0].get("value", ""))
            approve = Decision(event=Event.APPROVE, payload_hash=phash)
            await self.decide(client, user, rid, approve, foreign=foreign)
        except ValueError:
            await _ephemeral(client, body, lines.refusal("invalid", detail=smsg.BAD_BUTTON))
        except HitlError as exc:
            await _ephemeral(client, body, refusal_text(exc))

    def on_open(self, make_view: Any, *, shows_args: bool = False, decides: bool = False) -> Any:
        """`decides`: the modal submits a decision, so whoever may not make it is told
        so before filling it in, not after."""

        async def handler(
            ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
        ) -> None:
            await ack()
            try:
                rid, _ = render.ButtonValue.decode(body["actions"][0].get("value", ""))
                req = await self.rt.requests.get(rid)
            except (ValueError, NotFound):
                await _ephemeral(client, body, lines.refusal("invalid", detail=smsg.BAD_BUTTON))
                return
            except HitlError as exc:  # e.g. its review terms are gone: say so, open nothing
                await _ephemeral(client, body, refusal_text(exc))
                return
            user, foreign = body["user"]["id"], is_foreign(actor_team(body), context)
            if shows_args and not await may_see(self.rt, client, user, req, foreign=foreign):
                log.info("refused", extra={"what": "view", "actor": user, "request_id": rid})
                await _ephemeral(client, body, smsg.MAY_NOT_SEE.format(id=rid))
                return
            if decides and not await may_decide(self.rt, client, user, req, foreign=foreign):
                refused = await self._refusal_of_submit(client, user, body, foreign=foreign)
                if refused is not None:
                    await _ephemeral(client, body, refused)
                    return
            view = make_view(req)
            view_id = await open_view(client, body, view)
            if view_id and req.state == State.PENDING_REVIEW:
                await self.rt.cards.add_open_view(req.id, view_id, str(view["callback_id"]))

        return handler

    async def _refusal_of_submit(
        self, client: AsyncWebClient, user: str, body: dict[str, Any], *, foreign: bool
    ) -> str | None:
        """What submitting the Edit modal would answer this person, found by submitting an
        edit with no arguments: the store refuses it, and audits it, exactly as it would
        refuse the real one (not theirs to decide, decided already, expired, changed),
        and can never approve it, since an edit without arguments is refused last. None:
        only the missing arguments were refused, so they may decide after all (their
        groups changed since `may_decide` looked)."""
        rid, phash = render.ButtonValue.decode(body["actions"][0].get("value", ""))
        probe = Decision(event=Event.EDIT_AND_APPROVE, payload_hash=phash)
        try:
            await self.decide(client, user, rid, probe, foreign=foreign)
        except (AlreadyResolved, Expired, NotEligible, StalePayload) as exc:
            return refusal_text(exc)
        except HitlError:
            return None
        return None

    async def on_close(self, ack: AsyncAck) -> None:
        await ack()

    async def on_reject(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        view = body["view"]
        try:
            rid, phash = render.ButtonValue.decode(view.get("private_metadata", ""))
        except ValueError:
            await ack(response_action="errors", errors={views.REASON_BLOCK: smsg.BAD_BUTTON})
            return
        code, text = views.parse_reject(view["state"]["values"])
        if text is not None and len(text) > MAX_REASON:  # the input's own limit; never from Slack
            await ack(
                response_action="errors",
                errors={views.REASON_TEXT_BLOCK: smsg.REASON_TOO_LONG.format(limit=MAX_REASON)},
            )
            return
        if not code:
            await ack(
                response_action="errors", errors={views.REASON_BLOCK: smsg.REASON_REQUIRED_SHORT}
            )
            return
        try:
            await self.decide(
                client,
                body["user"]["id"],
                rid,
                Decision(event=Event.REJECT, payload_hash=phash, reason_code=code, text=text),
                foreign=is_foreign(actor_team(body), context),
            )
        except HitlError as exc:
            why = await modal_refusal(self.names, client, exc)
            await ack(response_action="errors", errors={views.REASON_BLOCK: why})
            return
        await ack()

    async def on_edit(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        """Approve the edited call, or refuse it inside the modal and change nothing.

        The edit is checked before any transition: JSON, then the tool's recorded
        schema (or, with none, the call's own argument names), so a refused edit leaves
        the request's state, version, payload hash and audit exactly as they were.
        """
        view = body["view"]
        try:
            rid, phash = render.ButtonValue.decode(view.get("private_metadata", ""))
        except ValueError:
            await _refuse(ack, smsg.BAD_BUTTON)
            return
        raw = views.parse_edit(view["state"]["values"])
        if text_too_deep(raw, MAX_ARGS_DEPTH):  # 1,500 brackets fit the box: json.loads recurses
            await _refuse(ack, msg.ARGS_TOO_DEEP.format(limit=MAX_ARGS_DEPTH))
            return
        try:
            new_args = json.loads(raw)
        except json.JSONDecodeError as exc:
            await _refuse(ack, smsg.EDIT_BAD_JSON.format(error=exc))
            return
        try:
            req = await self.rt.requests.get(rid)
        except NotFound:
            await _refuse(ack, smsg.EDIT_GONE)
            return
        # The schema of this request's own requester: another agent's, for a tool of the
        # same name, never decides what a person may change here.
        schema = await self.rt.tools.schema_of(req.requester, req.tool)
        found = problems(schema, new_args, current=req.args)
        if found:
            log.info("edit of %s refused in the modal: %s", rid, found)
            await _refuse(ack, "; ".join(found))
            return
        try:
            await self.decide(
                client,
                body["user"]["id"],
                rid,
                Decision(event=Event.EDIT_AND_APPROVE, payload_hash=phash, new_args=new_args),
                foreign=is_foreign(actor_team(body), context),
            )
        except HitlError as exc:
            await _refuse(ack, await modal_refusal(self.names, client, exc))
            return
        await ack()


async def _refuse(ack: AsyncAck, text: str) -> None:
    """Keep the Edit modal open with `text` (plain) under the arguments box."""
    await ack(response_action="errors", errors={views.ARGS_BLOCK: fit(text)})


async def _ephemeral(client: AsyncWebClient, body: dict[str, Any], text: str) -> None:
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    user = body["user"]["id"]
    if channel:
        await tell(client, channel=channel, user=user, text=text, thread_ts=_thread_of(body))
    else:
        log.info("no channel to tell %s: %s", user, text)


def _thread_of(body: dict[str, Any]) -> str | None:
    """The thread of the clicked card, so the answer appears beside the card the person
    clicked, not at the bottom of the channel; None for a card outside any thread (an
    ephemeral in a thread nobody opened would go unseen)."""
    message = body.get("message") or {}
    found = message.get("thread_ts") or (body.get("container") or {}).get("thread_ts")
    return str(found) if found else None


async def open_view(
    client: AsyncWebClient, body: dict[str, Any], view: dict[str, Any]
) -> str | None:
    """Open a modal after the ack, its metadata sealed with serve's key (view_seal.py):
    its view id. A refusal (an expired trigger) is logged, never raised, for the same
    reason as `tell`."""
    view = seal_for(view, body["user"]["id"])
    try:
        resp = await client.views_open(trigger_id=body["trigger_id"], view=view)
    except SlackApiError as exc:
        log.warning("could not open a modal", extra={"error": exc.response.get("error")})
        return None
    opened = resp.get("view") or {}
    return str(opened["id"]) if opened.get("id") else None


async def tell(
    client: AsyncWebClient, *, channel: str, user: str, text: str, thread_ts: str | None = None
) -> None:
    """An ephemeral answer that never raises: the decision it explains is already
    audited, and a listener that raises after its ack makes Bolt answer Slack 404
    (it drops the ack), so Slack shows the person an error or retries the event."""
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
    except SlackApiError as exc:  # e.g. user_not_in_channel: they clicked a card they can't see
        log.warning(
            "could not tell a person why",
            extra={"user": user, "channel": channel, "error": exc.response.get("error")},
        )
