"""Who may steer, stop and read what, beyond who may decide (that is the machine's).

- A run may be steered or stopped by the person who started it, by the people who may
  decide the request it waits on, and by the policy's `operators`. An outside agent's
  run (SDK, HTTP, MCP, Claude Code), or one started with `POST /v1/runs`, was started by
  no person: the people who may decide a call it waits on or has in its home thread, and
  the person a call was asked for, take the starter's place.
- A request's audit trail may be read by its requester (and whom it was asked for),
  by the people who may decide it, and by the operators.

- A request's card details (View, Edit, `/hitl pending`, the App Home) are shown to the
  people who may decide it and to the operators.

Everyone else is refused; a refused stop or steer is written to the run's audit.
Group and channel principals are resolved like approvers (bot.slack.access.groups). A member
of another workspace (Slack Connect) counts only where named by user id: never as a
member of a group or channel, never as "*".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.deciders import Verdict, who_may_decide
from bot.core.ids import is_question_id
from bot.core.models import WORKER, ActionRequest, Run
from bot.core.states import Event, State
from bot.errors import HitlError
from bot.gate.runtime import Runtime
from bot.slack.access.groups import groups_of, needs_lookup


def is_foreign(user_team: object, context: Mapping[str, Any]) -> bool:
    """Is a person of team `user_team` from another workspace than the app's own (the
    team `auth.test` names, which Bolt keeps in `authorize_result`)? Unknown home, known
    team: foreign, since nothing proves otherwise."""
    if not isinstance(user_team, str) or not user_team:
        return False
    found = context.get("authorize_result")
    home = found.get("team_id") if isinstance(found, Mapping) else None
    return not home or user_team != home


def actor_team(body: Mapping[str, Any]) -> object:
    """The clicking or typing person's team: `user.team_id` of an interaction payload,
    `user_team` (else `team`) of a message event."""
    user = body.get("user")
    if isinstance(user, Mapping):
        return user.get("team_id")
    return body.get("user_team") or body.get("team")


async def _among(
    rt: Runtime, client: AsyncWebClient, user: str, names: Iterable[str], *, foreign: bool
) -> bool:
    principals = set(names)
    if user in principals:
        return True
    if foreign:  # only a named user id counts for a member of another workspace
        return False
    if "*" in principals:
        return True
    return bool(await groups_of(rt.slack, client, user, principals))


async def is_operator(
    rt: Runtime, client: AsyncWebClient, user: str, *, foreign: bool = False
) -> bool:
    return await _among(rt, client, user, rt.policy.operators, foreign=foreign)


async def may_direct(
    rt: Runtime, client: AsyncWebClient, user: str, run: Run, *, foreign: bool = False
) -> bool:
    """May `user` steer or stop `run`, or answer its question?"""
    if user == run.requester or await is_operator(rt, client, user, foreign=foreign):
        return True
    waiting = run.waiting_on or ""
    if waiting and not is_question_id(waiting):
        try:
            req = await rt.requests.get(waiting)
        except HitlError:
            return False
        return await _among(rt, client, user, req.eligible(), foreign=foreign)
    if run.outside or run.owner not in ("", WORKER):
        # Started by an agent of its own, or over POST /v1/runs by an identity that files
        # its calls itself: no person started it and no worker records what it waits on,
        # so the calls it filed name who may steer it.
        return await _directs_outside(rt, client, user, run, foreign=foreign)
    # a call filed under the run over the API, the SDK, MCP or the hook: its deciders
    # steer the run as they would a worker's waiting on it
    for rid in await rt.steering.waiting(run.id):
        if is_question_id(rid):
            continue
        try:
            req = await rt.requests.get(rid)
        except HitlError:
            continue
        if req.state == State.PENDING_REVIEW and await _among(
            rt, client, user, req.eligible(), foreign=foreign
        ):
            return True
    return False


async def _directs_outside(
    rt: Runtime, client: AsyncWebClient, user: str, run: Run, *, foreign: bool
) -> bool:
    """An outside agent's run names no person who started it and may wait on several
    calls at once: those who may decide a call it waits on or has in its home thread, and
    whom one of those calls was asked for, may steer it."""
    rids = set(await rt.steering.waiting(run.id))
    if run.channel and run.thread_ts:
        rids |= await rt.threads.cards(run.channel, run.thread_ts)
    for rid in sorted(rids):
        try:
            req = await rt.requests.get(rid)
        except HitlError:
            continue
        if req.on_behalf_of == user and not foreign:
            return True
        if await _among(rt, client, user, req.eligible(), foreign=foreign):
            return True
    return False


async def may_read(rt: Runtime, client: AsyncWebClient, user: str, req: ActionRequest) -> bool:
    """May `user` read the request's audit trail?"""
    if req.is_requester(user) or await is_operator(rt, client, user):
        return True
    return await _among(rt, client, user, req.eligible(), foreign=False)


async def may_decide(
    rt: Runtime,
    client: AsyncWebClient,
    user: str,
    req: ActionRequest,
    *,
    foreign: bool = False,
    event: Event = Event.APPROVE,
) -> bool:
    """Could `user` make `event` on `req` now? The machine's own rule
    (bot/core/deciders.py), asked with the person's groups resolved."""
    return await verdict_of(rt, client, user, req, foreign=foreign, event=event) == Verdict.MAY


async def verdict_of(
    rt: Runtime,
    client: AsyncWebClient,
    user: str,
    req: ActionRequest,
    *,
    foreign: bool = False,
    event: Event = Event.APPROVE,
) -> Verdict:
    """The one rule's answer for `user`, looking their groups up only when a group or
    channel among the deciders could make them one (never for another workspace's)."""
    principals = req.eligible()
    groups: tuple[str, ...] = ()
    settled = user in principals or "*" in principals
    if not foreign and not settled and needs_lookup(principals):
        groups = await groups_of(rt.slack, client, user, principals)
    return who_may_decide(req, user, groups, event=event, foreign=foreign)


async def may_see(
    rt: Runtime, client: AsyncWebClient, user: str, req: ActionRequest, *, foreign: bool = False
) -> bool:
    """May `user` see the request's full arguments and find it in their lists?"""
    if await is_operator(rt, client, user, foreign=foreign):
        return True
    return await may_decide(rt, client, user, req, foreign=foreign)


async def audit_refusal(rt: Runtime, run_id: str, *, user: str, what: str) -> None:
    """Write a refused stop or steer into the run's audit, beside the accepted ones."""
    entry = {"at": rt.clock(), "kind": "refused", "what": what, "actor": user, "run_id": run_id}
    await rt.run_audit.append(run_id, entry)
