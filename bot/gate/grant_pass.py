"""A new request inside a live grant is approved at once, by the grant's granter.

Only a store holding serve's key passes anything, and only under a grant serve signed
whose source request its granter approved (bot/store/grants.py `problem`): the approval
is a person's decision like any other (event approve, actor the granter, reason code
`grant:G`), sealed in the same script as its move, so every executor accepts it. A
process without the key leaves the request waiting; serve's notifier passes it when it
sees it created.
The use is taken first (one script: live, uses left, counted); if the approval is then
refused, the use is given back.
"""

from __future__ import annotations

import logging

from bot.core.grants import covers, reason_of, standing_max
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import AlreadyResolved, HitlError, NotReplicated, StoreUnavailable
from bot.store.figures import metrics
from bot.store.grants import GrantStore
from bot.store.replies import Reply
from bot.store.requests import RequestStore

log = logging.getLogger(__name__)
FORGED_GRANT = "forged_grant"  # the log line an operator alerts on


def may_pass(requests: RequestStore, policy: Policy, req: ActionRequest) -> bool:
    """Could a grant pass `req` at all? Cheap, so the hot path asks it first."""
    return (
        requests.signer is not None
        and req.state == State.PENDING_REVIEW
        and req.quorum == 1
        and not req.approvals
        and standing_max(policy, req.risk) is not None
    )


async def pass_if_granted(
    requests: RequestStore, grants: GrantStore, policy: Policy, req: ActionRequest
) -> ActionRequest:
    """`req` approved under the first live grant that covers it, or `req` as it was."""
    if not may_pass(requests, policy, req):
        return req
    now = requests.clock()
    for held in await grants.live():
        g = held.grant
        if not held.live(now) or not covers(g, req):
            continue
        problem = await grants.problem(held)
        if problem is not None:
            # A record serve did not make, or one changed since: someone with write
            # access to the store tried to approve calls in a person's name.
            log.error(FORGED_GRANT, extra={"grant": g.id, "request_id": req.id, "why": problem})
            metrics.count_forged_grant()
            continue
        status = await grants.use(g.id, req.id, g.granted_by)
        if status not in (Reply.OK, Reply.AGAIN):
            continue
        approve = Decision(
            event=Event.APPROVE,
            actor=g.granted_by,
            actor_groups=g.granter_groups,
            payload_hash=req.payload_hash,
            reason_code=reason_of(g.id),
            via=reason_of(g.id),
        )
        try:
            moved = await requests.transition(req.id, approve)
        except (NotReplicated, StoreUnavailable):
            raise  # the use stays taken: a retry finds it ('again') and approves
        except AlreadyResolved:
            await grants.give_back(g.id, req.id, "already_resolved")
            return await requests.get(req.id)
        except HitlError as exc:
            # The granter may not decide this one (the call is theirs, it expired...):
            # gated as usual, the use given back.
            log.info("grant not used", extra={"grant": g.id, "request_id": req.id, "why": str(exc)})
            await grants.give_back(g.id, req.id, type(exc).__name__)
            continue
        log.info("passed under grant", extra={"grant": g.id, "request_id": req.id})
        return moved.request
    return req
