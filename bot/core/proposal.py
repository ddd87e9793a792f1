"""Turn a tool call into a new request, with the policy copied in.

Copying the chain and the approvers into the request is what keeps a request
in flight immune to policy edits: the sweeper and the store never read the
policy file.
"""

from __future__ import annotations

from typing import Any

from bot.core.models import ActionRequest, RiskTier
from bot.core.payload import canonical_args, payload_hash
from bot.core.policy import TIER_ORDER, Policy
from bot.core.states import State


def propose(
    policy: Policy,
    *,
    request_id: str,
    tool: str,
    args: dict[str, Any],
    requester: str,
    now: int,
    run_id: str | None = None,
    channel: str | None = None,
    idempotency_key: str | None = None,
    risk: RiskTier | None = None,
) -> tuple[ActionRequest, bool]:
    """The request in `pending_review`, and whether it needs a person at all.

    A caller-supplied `risk` may raise the tier the policy gives, never lower it.
    """
    canonical_args(args)
    verdict = policy.classify(tool, args)
    tier = verdict.tier
    if risk is not None and TIER_ORDER.index(risk) > TIER_ORDER.index(tier):
        tier = risk
    needs_review = verdict.review or tier != verdict.tier
    tp = policy.tiers[tier]
    levels = policy.levels(tier, now)
    req = ActionRequest(
        id=request_id,
        tool=tool,
        args=args,
        payload_hash=payload_hash(tool, args),
        run_id=run_id,
        requester=requester,
        channel=channel,
        risk=tier,
        created_at=now,
        state=State.PENDING_REVIEW,
        expires_at=now + levels[0].timeout_ms,
        levels=levels,
        approvers=tp.approvers,
        quorum=tp.approvals_required,
        self_approval=tp.self_approval,
        allow_edit=tp.allow_edit,
        on_exhausted=State(tp.on_exhausted),
        claim_timeout_ms=policy.claim_timeout,
        execution_timeout_ms=policy.execution_timeout,
        idempotency_key=idempotency_key,
    )
    return req, needs_review
