"""Who may steer, stop and read what, beyond who may decide (that is the machine's).

- A run may be steered or stopped by the person who started it, by the people who may
  decide the request it waits on, and by the policy's `operators`.
- A request's audit trail may be read by its requester (and whom it was asked for),
  by the people who may decide it, and by the operators.

Everyone else is refused; a refused stop or steer is written to the run's audit.
Group and channel principals are resolved like approvers (bot.slack.groups).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Run
from bot.errors import HitlError
from bot.runtime import Runtime
from bot.slack.groups import groups_of
from bot.store import keys

RUN_AUDIT_TTL_S = 30 * 86_400


async def _among(rt: Runtime, client: AsyncWebClient, user: str, names: Iterable[str]) -> bool:
    principals = set(names)
    if "*" in principals or user in principals:
        return True
    return bool(await groups_of(rt.redis, client, user, principals))


async def is_operator(rt: Runtime, client: AsyncWebClient, user: str) -> bool:
    return await _among(rt, client, user, rt.policy.operators)


async def may_direct(rt: Runtime, client: AsyncWebClient, user: str, run: Run) -> bool:
    """May `user` steer or stop `run`?"""
    if user == run.requester or await is_operator(rt, client, user):
        return True
    waiting = run.waiting_on or ""
    if waiting and not waiting.startswith("q"):
        try:
            req = await rt.requests.get(waiting)
        except HitlError:
            return False
        return await _among(rt, client, user, req.eligible())
    return False


async def may_read(rt: Runtime, client: AsyncWebClient, user: str, req: ActionRequest) -> bool:
    """May `user` read the request's audit trail?"""
    if req.is_requester(user) or await is_operator(rt, client, user):
        return True
    return await _among(rt, client, user, req.eligible())


async def audit_refusal(rt: Runtime, run_id: str, *, user: str, what: str) -> None:
    """Write a refused stop or steer into the run's audit, beside the accepted ones."""
    entry = {"at": rt.clock(), "kind": "refused", "what": what, "actor": user, "run_id": run_id}
    pipe = rt.redis.pipeline(transaction=True)
    pipe.rpush(keys.run_audit(run_id), json.dumps(entry))
    pipe.expire(keys.run_audit(run_id), RUN_AUDIT_TTL_S)
    await pipe.execute()
