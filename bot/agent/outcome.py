"""What the model reads as a tool result, given where the call's request ended up.

Pure functions of the request: the gate decides what happens, these say it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.agent import messages as msg
from bot.core.models import ActionRequest
from bot.core.states import Event, State, SystemReason


@dataclass(frozen=True)
class Outcome:
    """The tool result the model reads, and what it means for the run."""

    text: str
    # steered, invalid, completed, rejected, auto_rejected, withdrawn, lapsed, rolled_back,
    # manual_intervention, answered, no_answer, stopped
    status: str
    request_id: str | None = None
    stop: bool = False  # the run must end now (hard stop)


def stopped(request_id: str | None = None) -> Outcome:
    return Outcome(msg.STOPPED, "stopped", request_id, stop=True)


def explain(req: ActionRequest) -> Outcome:
    """The result for a request that will not run now (or already ran, for a resumed run)."""
    res = req.resolution
    detail = req.detail or ""
    if req.state == State.COMPLETED:
        if req.original_hash:  # a person edited it: the model must not think its own call ran
            args = json.dumps(req.args, ensure_ascii=False)
            text = msg.COMPLETED_EARLIER_EDITED.format(args=args, output=detail)
            return Outcome(text, "completed", req.id)
        return Outcome(msg.COMPLETED_EARLIER.format(output=detail), "completed", req.id)
    if req.state == State.ROLLED_BACK:
        return Outcome(msg.FAILED_ROLLED_BACK.format(error=detail), "rolled_back", req.id)
    if req.state == State.MANUAL_INTERVENTION:
        return Outcome(msg.FAILED_MANUAL.format(error=detail), "manual_intervention", req.id)
    if req.state == State.AUTO_REJECTED:
        return Outcome(msg.AUTO_REJECTED, "auto_rejected", req.id)
    if res is not None and res.event == Event.REJECT:
        text = f": {res.text}" if res.text else ""
        reason = res.reason_code or "none given"
        return Outcome(
            msg.REJECTED.format(actor=res.actor, reason=reason, text=text), "rejected", req.id
        )
    if res is not None and res.event == Event.CANCEL:
        if res.reason_code == SystemReason.RUN_STOPPED:
            return stopped(req.id)
        reason = res.reason_code or "none given"
        text = f": {res.text}" if res.text else ""
        return Outcome(
            msg.WITHDRAWN.format(actor=res.actor, reason=reason, text=text), "withdrawn", req.id
        )
    # Cancelled after its approval: nobody claimed it in time, or a stop came in between.
    return Outcome(msg.CLAIM_EXPIRED, "lapsed", req.id)
