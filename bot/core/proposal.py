"""Turn a tool call into a new request, with the policy copied in.

Copying the chain and the approvers into the request is what keeps a request
in flight immune to policy edits: the sweeper and the store never read the
policy file.
"""

from __future__ import annotations

from typing import Any

from bot import messages as msg
from bot.core.args.payload import canonical_args, hash_of
from bot.core.models import ActionRequest, RiskTier
from bot.core.policy import TIER_ORDER, Policy
from bot.core.states import State
from bot.errors import Forbidden


def _tier(
    policy: Policy, tool: str, args: dict[str, Any], risk: RiskTier | None
) -> tuple[RiskTier, bool]:
    verdict = policy.classify(tool, args)
    tier = verdict.tier
    if risk is not None and TIER_ORDER.index(risk) > TIER_ORDER.index(tier):
        tier = risk
    return tier, verdict.review or tier != verdict.tier


def exempt(policy: Policy, tool: str, args: dict[str, Any], risk: RiskTier | None) -> bool:
    """Whether the policy lets this call run without a person (`review: none`)."""
    return not _tier(policy, tool, args, risk)[1]


def check_channel(channel: str | None, allowed: set[str], what: str) -> None:
    """Refuse a caller-chosen channel the policy does not review `what` in: the gated
    side may not route its own review (or its runs and questions) anywhere else."""
    if channel is not None and channel not in allowed:
        shown = ", ".join(sorted(allowed)) or "none"
        raise Forbidden(msg.CHANNEL_NOT_ALLOWED.format(channel=channel, what=what, allowed=shown))


def review_channels(policy: Policy, now: int) -> set[str]:
    """Every channel any tier of the policy reviews in, at any level: where a run's
    thread or a question may be posted."""
    return {ch for tier in policy.tiers for lvl in policy.levels(tier, now) for ch in lvl.channels}


def propose(
    policy: Policy,
    *,
    request_id: str,
    tool: str,
    args: dict[str, Any],
    requester: str,
    now: int,
    on_behalf_of: str | None = None,
    run_id: str | None = None,
    channel: str | None = None,
    idempotency_key: str | None = None,
    risk: RiskTier | None = None,
    owner: str | None = None,
) -> tuple[ActionRequest, bool]:
    """The request in `pending_review`, and whether it needs a person at all.

    A caller-supplied `risk` may raise the tier the policy gives, never lower it.
    `owner`: the identity whose work it is; the requester when not given.
    """
    canonical = canonical_args(args)
    tier, needs_review = _tier(policy, tool, args, risk)
    tp = policy.tiers[tier]
    levels = policy.levels(tier, now)
    check_channel(channel, {ch for lvl in levels for ch in lvl.channels}, f"{tier} requests")
    req = ActionRequest(
        id=request_id,
        tool=tool,
        args=args,
        payload_hash=hash_of(tool, canonical),
        run_id=run_id,
        requester=requester,
        owner=requester if owner is None else owner,
        on_behalf_of=on_behalf_of or None,
        channel=channel,
        risk=RiskTier(tier),
        created_at=now,
        state=State.PENDING_REVIEW,
        expires_at=now + levels[0].timeout_ms,
        levels=levels,
        approvers=tp.deciders(),
        quorum=tp.approvals_required,
        self_approval=tp.self_approval,
        allow_edit=tp.allow_edit,
        on_exhausted=State(tp.on_exhausted),
        claim_timeout_ms=policy.claim_timeout,
        execution_timeout_ms=policy.execution_timeout,
        idempotency_key=idempotency_key,
    )
    return req, needs_review
