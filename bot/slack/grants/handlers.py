"""Listeners for standing approvals: the card's "Approve and allow similar" button and
its dialog, Revoke (card, App Home, `/hitl grants revoke`), and the card's redraw.

A grant is made only after the approval of the call it was asked on went through the
request store as the person's own decision: the store checks there, server-side, that
they may approve this call (never the requester, never someone outside the approvers),
so whoever could not approve it cannot make a grant either, whatever they click.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.async_app import AsyncBoltContext as BoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.grants import Grant, expiry, scopes
from bot.core.models import Decision
from bot.core.states import Event, State
from bot.errors import HitlError, NotFound
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.access.groups import groups_of, needs_lookup
from bot.slack.access.permissions import actor_team, is_foreign, is_operator, may_decide
from bot.slack.blocks import escape as esc
from bot.slack.blocks import lines
from bot.slack.blocks.escape import VIEW_BLOCKS, ButtonValue
from bot.slack.blocks.modal_errors import fit, modal_refusal
from bot.slack.blocks.render import Rendered
from bot.slack.grants import messages as gmsg
from bot.slack.grants.card import ACTION_GRANT, ACTION_REVOKE, VIEW_GRANT
from bot.slack.grants.listing import grants_list, home_blocks
from bot.slack.grants.notes import redraw
from bot.slack.grants.views import SCOPE_BLOCK, grant_modal, read_submission
from bot.slack.listeners.approvals import Approvals, open_view, tell
from bot.store.grants import Held
from bot.store.replies import Reply

log = logging.getLogger(__name__)


async def may_revoke(rt: Runtime, client: AsyncWebClient, user: str, held: Held) -> bool:
    """The granter, any approver of the grant's tier (as policy names them now), or an
    operator."""
    if user == held.grant.granted_by or await is_operator(rt, client, user):
        return True
    deciders = set(rt.policy.tiers[held.grant.risk].first_deciders())
    if user in deciders or "*" in deciders:
        return True
    return needs_lookup(deciders) and bool(await groups_of(rt.slack, client, user, deciders))


async def revoke(rt: Runtime, client: AsyncWebClient, user: str, gid: str) -> str:
    """Revoke grant `gid` for `user`, if they may: what to tell them. `gid` may be typed
    by anyone (`/hitl grants revoke …`): it is looked up as data and shown escaped."""
    shown = esc.mrkdwn(gid)
    try:
        held = await rt.grants.get(gid)
    except NotFound:
        return gmsg.REVOKE_GONE.format(gid=shown)
    if not await may_revoke(rt, client, user, held):
        log.info("refused", extra={"what": "revoke_grant", "actor": user, "grant": gid})
        return gmsg.MAY_NOT_REVOKE.format(gid=shown)
    status, who = await rt.grants.revoke(gid, user)
    if status == Reply.ALREADY:
        return gmsg.REVOKED_ALREADY.format(gid=shown, who=esc.user(who))
    if status != Reply.OK:
        return gmsg.REVOKE_GONE.format(gid=shown)
    log.info("grant revoked", extra={"grant": gid, "actor": user})
    await redraw(rt, client, rt.policy, held.grant.source)
    return gmsg.REVOKED.format(gid=shown)


class GrantHandlers:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.approvals = Approvals(rt)

    def register(self, app: AsyncApp) -> None:
        app.action(ACTION_GRANT)(self.on_open)
        app.view(VIEW_GRANT)(self.on_submit)
        app.action(ACTION_REVOKE)(self.on_revoke)

    async def on_open(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        await ack()
        user, foreign = body["user"]["id"], is_foreign(actor_team(body), context)
        try:
            rid, _ = ButtonValue.decode(body["actions"][0].get("value", ""))
            req = await self.rt.requests.get(rid)
        except (ValueError, HitlError):
            await _ephemeral(client, body, lines.refusal("invalid", detail=smsg.BAD_BUTTON))
            return
        if not scopes(self.rt.policy, req) or req.quorum != 1:
            await _ephemeral(client, body, gmsg.NOT_ALLOWED.format(risk=req.risk.value))
            return
        # Told now, before filling the dialog in; the submit is checked again regardless.
        if not await may_decide(self.rt, client, user, req, foreign=foreign):
            why = gmsg.GRANT_REFUSED.format(why=f"{req.id} is not yours to approve.")
            await _ephemeral(client, body, why)
            return
        view_id = await open_view(client, body, grant_modal(req, self.rt.policy))
        if view_id and req.state == State.PENDING_REVIEW:
            await self.rt.cards.add_open_view(req.id, view_id, VIEW_GRANT)

    async def on_submit(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: BoltContext
    ) -> None:
        view, user = body["view"], body["user"]["id"]
        foreign = is_foreign(actor_team(body), context)
        try:
            rid, phash = ButtonValue.decode(view.get("private_metadata", ""))
            req = await self.rt.requests.get(rid)
        except (ValueError, HitlError) as exc:
            await _refuse(ack, str(exc))
            return
        asked = read_submission(req, self.rt.policy, view["state"]["values"])
        if isinstance(asked, dict):
            await ack(response_action="errors", errors={k: fit(v) for k, v in asked.items()})
            return
        try:  # the approval first: the store refuses whoever may not approve this call
            approve = Decision(event=Event.APPROVE, payload_hash=phash)
            await self.approvals.decide(client, user, rid, approve, foreign=foreign)
            req = await self.rt.requests.get(rid)
        except HitlError as exc:
            text = await modal_refusal(self.approvals.names, client, exc)
            await _refuse(ack, gmsg.GRANT_REFUSED.format(why=text))
            return
        res = req.resolution
        if res is None or res.actor != user or res.event != Event.APPROVE:
            await _refuse(ack, gmsg.GRANT_REFUSED.format(why=f"{rid} was decided otherwise."))
            return
        await ack()
        groups: tuple[str, ...] = ()
        if needs_lookup(req.eligible()):
            groups = await groups_of(self.rt.slack, client, user, req.eligible())
        now = self.rt.clock()
        most = self.rt.policy.tiers[req.risk].standing
        grant = Grant(
            id=self.rt.grants.new_id(),
            tool=req.tool,
            risk=req.risk,
            scope=asked.scope,
            requester=req.requester,
            owner=req.owner,
            on_behalf_of=req.on_behalf_of,
            run_id=req.run_id if asked.scope == "run" else None,
            bounds=asked.bounds,
            uses=asked.uses,
            granted_by=user,
            granter_groups=groups,
            created_at=now,
            expires_at=expiry(now, asked.span_ms, most.max if most else 0),
            source=req.id,
            channel=req.channel,
        )
        await self.rt.grants.make(grant)
        log.info("grant made", extra={"grant": grant.id, "request_id": rid, "actor": user})
        await redraw(self.rt, client, self.rt.policy, rid)

    async def on_revoke(self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        gid = str(body["actions"][0].get("value", ""))
        text = await revoke(self.rt, client, body["user"]["id"], gid)
        if (body.get("view") or {}).get("type") == "home":
            await client.chat_postMessage(channel=body["user"]["id"], text=text)
        else:
            await _ephemeral(client, body, text)


async def revocable(rt: Runtime, client: AsyncWebClient, user: str) -> list[Held]:
    """The live grants `user` may revoke."""
    now = rt.clock()
    return [
        h for h in await rt.grants.live() if h.live(now) and await may_revoke(rt, client, user, h)
    ]


async def grants_command(rt: Runtime, client: AsyncWebClient, user: str, rest: str) -> Rendered:
    """`/hitl grants`: the live grants this person may revoke; `/hitl grants revoke G…`."""
    verb, _, gid = rest.partition(" ")
    if verb.lower() == "revoke" and gid.strip():
        return Rendered(await revoke(rt, client, user, gid.strip()), [])
    return grants_list(await revocable(rt, client, user), rt.clock())


async def with_grants(
    rt: Runtime, client: AsyncWebClient, user: str, view: dict[str, Any]
) -> dict[str, Any]:
    """The App Home `view` with the grants this person may revoke, after what waits for
    them; the policy summary at its end gives way if Slack's 100 blocks would overflow."""
    mine = home_blocks(await revocable(rt, client, user), rt.clock())
    blocks = list(view["blocks"])
    at = next((i for i, b in enumerate(blocks) if b.get("type") == "divider"), len(blocks))
    blocks[at:at] = [{"type": "divider"}, *mine]
    return {**view, "blocks": blocks[:VIEW_BLOCKS]}


async def _refuse(ack: AsyncAck, text: str) -> None:
    await ack(response_action="errors", errors={SCOPE_BLOCK: fit(text)})


async def _ephemeral(client: AsyncWebClient, body: dict[str, Any], text: str) -> None:
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    if channel:
        await tell(client, channel=str(channel), user=body["user"]["id"], text=text)
