"""What a request that left review means for the caller: run it, or an exception saying why not."""

from __future__ import annotations

from bot.core.models import ActionRequest
from bot.core.states import Event, State
from bot.errors import AlreadyResolved
from bot.sdk import messages as msg
from bot.sdk.errors import Cancelled, Rejected, TimedOut

# Withdrawals the SDK makes itself when nobody decided: they read as TimedOut, not Cancelled.
WITHDRAW_REASONS = frozenset({"caller_timeout", "no_sweeper", "caller_gone", "abandoned"})


def outcome(req: ActionRequest) -> ActionRequest:
    """The request if it may run (approved, auto_approved); otherwise raise the reason."""
    res = req.resolution
    actor = res.actor if res else "system"
    reason = res.reason_code if res else None
    text = res.text if res else None
    if req.state in (State.APPROVED, State.AUTO_APPROVED):
        return req
    if req.state == State.AUTO_REJECTED:
        raise TimedOut(
            msg.AUTO_REJECTED.format(tool=req.tool),
            request=req,
            reason_code=reason,
            text=text,
            actor=actor,
        )
    if req.state == State.CANCELLED:
        if res is not None and res.event == Event.REJECT:
            raise Rejected(
                msg.REJECTED.format(
                    tool=req.tool, actor=actor, reason=reason, text=f": {text}" if text else ""
                ),
                request=req,
                reason_code=reason,
                text=text,
                actor=actor,
            )
        if res is not None and res.event == Event.CANCEL:
            cls = TimedOut if reason in WITHDRAW_REASONS else Cancelled
            raise cls(
                msg.CANCELLED.format(tool=req.tool, actor=actor, reason=reason),
                request=req,
                reason_code=reason,
                text=text,
                actor=actor,
            )
        raise TimedOut(
            msg.NEVER_CLAIMED.format(tool=req.tool),
            request=req,
            reason_code="not_claimed",
            actor=actor,
        )
    raise AlreadyResolved(
        msg.ALREADY_RAN.format(tool=req.tool, id=req.id, state=req.state.value),
        state=req.state.value,
        by=actor,
        at=res.at if res else req.created_at,
        how=req.state.value,
    )
