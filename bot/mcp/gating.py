"""One call through the gate, as both MCP faces need it: decided, or refused with a reason.

The reason is the text the model reads. Anything that is not a clear approval, a
store that cannot be reached included, refuses the call: an MCP gateway that
forwarded calls while the gate was down would be no gate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

import anyio

from bot.core.args.schema import schema_problem
from bot.core.models import ActionRequest, RiskTier
from bot.errors import HitlError
from bot.mcp import messages as msg
from bot.sdk import Gate, Rejected

log = logging.getLogger(__name__)
T = TypeVar("T")
WITHDRAW_GRACE_S = 10.0


class Refused(HitlError):
    """The call must not run; `str()` says why, for the model to read."""


async def decided(
    gate: Gate,
    tool: str,
    args: dict[str, Any],
    *,
    args_schema: dict[str, Any] | None = None,
    risk: RiskTier | None = None,
    timeout: float | None = None,
    run_id: str | None = None,
    run_title: str | None = None,
) -> ActionRequest:
    """Wait for the decision: the approved request (its args maybe edited), or Refused.

    A `review: none` tool comes back at once, approved by the policy and audited. With
    `run_id`, a person's correction refuses the call with their words, and a stopped
    run refuses every call saying so: the text is what the model reads.
    """
    schema = args_schema if args_schema and schema_problem(args_schema) is None else None
    try:
        return await _withdrawable(
            gate.request_approval(
                tool,
                args,
                args_schema=schema,
                risk=risk,
                timeout=timeout,
                run_id=run_id,
                run_title=run_title,
            )
        )
    except Rejected as exc:  # TimedOut, Cancelled, Steered, RunStopped: the text says which
        raise Refused(str(exc)) from None
    except HitlError as exc:
        log.warning("gate_failed", extra={"tool": tool, "error": str(exc)})
        raise Refused(msg.GATE_FAILED.format(tool=tool, error=exc)) from None


async def _withdrawable(wait: Coroutine[Any, Any, T]) -> T:
    """Await the gate so that a client's cancel still withdraws the request.

    The SDK cancels a handler through an anyio scope, which cancels every later await
    in it too, so the gate's own clean-up (cancel the request: nobody will run it)
    would never reach the store. The wait runs as a task of its own; on cancel it
    gets one plain cancel and a shielded moment to withdraw.
    """
    task = asyncio.ensure_future(wait)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        with anyio.CancelScope(shield=True), contextlib.suppress(BaseException):
            await asyncio.wait_for(task, WITHDRAW_GRACE_S)
        raise


async def claimed(gate: Gate, req: ActionRequest) -> ActionRequest:
    """approved -> executing, exactly once, before anything runs."""
    try:
        return await gate.claim(req.id)
    except HitlError as exc:
        raise Refused(msg.CLAIM_FAILED.format(tool=req.tool, error=exc)) from None


async def report(gate: Gate, req: ActionRequest, *, ok: bool, detail: str) -> None:
    """Record how it went; a report that cannot be written is logged, never raised:
    the call has run, and the request's execution deadline flags it for a person."""
    try:
        await gate.report(req.id, ok=ok, detail=detail, fence=req.fence)
    except HitlError as exc:
        log.warning("report_failed", extra={"request_id": req.id, "error": str(exc)})


async def hand_over(gate: Gate, req: ActionRequest, via: str) -> None:
    """The caller runs an approved call itself and cannot tell us how it went: claim and
    close it, so the audit says who got it rather than "approved, never claimed". A claim
    refused (an approval serve did not sign, one already claimed) is Refused: the caller
    must not run what this gateway could not claim."""
    try:
        req = await gate.claim(req.id)
    except HitlError as exc:
        log.warning("claim_failed", extra={"request_id": req.id, "error": str(exc)})
        raise Refused(msg.CLAIM_FAILED.format(tool=req.tool, error=exc)) from None
    await report(gate, req, ok=True, detail=msg.AUDIT_HANDED_OVER.format(via=via))
