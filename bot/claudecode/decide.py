"""One Claude Code tool call through the gate: the hook's answer, allow or deny.

The policy decides under the tool's own name (`Bash`, `Write`, `mcp__fs__write_file`)
with `tool_input` as the arguments, and the session id as the run, so a person can
steer or stop the session from Slack. Anything but a clear approval denies: a hook
that let calls through while the gate was down would be no gate.

Claude Code runs an approved call itself, so the request is claimed and closed as handed
over before the hook answers allow: the audit says who got it, and a claim refused (an
approval serve did not sign) denies the call.
"""

from __future__ import annotations

import logging
from pathlib import PurePath
from typing import Any

from bot.claudecode import messages as msg
from bot.claudecode import wire
from bot.claudecode.wire import HookCall
from bot.core.models import SYSTEM, ActionRequest
from bot.core.states import SystemReason
from bot.errors import HitlError
from bot.sdk import Gate, Rejected, RunStopped

log = logging.getLogger(__name__)


async def decide(gate: Gate, call: HookCall, *, timeout_s: float) -> dict[str, Any]:
    """The hook's JSON answer for `call`, waiting at most `timeout_s` for a person.

    A wait longer than that withdraws the request (the card says nobody decided), so
    Claude Code's own hook timeout, a little longer, never kills a hook still waiting.
    """
    try:
        req, claimed = await gate.acquire(
            call.tool,
            call.args,
            run_id=call.session_id,
            run_title=run_title(call.cwd),
            timeout=timeout_s,
            claim=True,
        )
    except RunStopped as exc:
        return wire.stop(str(exc), _stopped(call, exc))
    except Rejected as exc:
        # A person said no (their reason), corrected the session (their words), nobody
        # decided in time, or an operator withdrew it: str() says which, for Claude.
        return wire.deny(str(exc))
    except HitlError as exc:
        log.warning("gate_failed", extra={"tool": call.tool, "error": str(exc)})
        return wire.deny(msg.GATE_FAILED.format(tool=call.tool, error=exc), tell_user=True)
    try:
        if not claimed:  # a free call in direct mode comes back claimed already
            await gate.claim(req.id)
    except HitlError as exc:
        log.warning("claim_failed", extra={"request_id": req.id, "error": str(exc)})
        return wire.deny(msg.CLAIM_FAILED.format(tool=call.tool, error=exc), tell_user=True)
    await _handed_over(gate, req)
    return wire.allow(_why_allowed(req), req.args)


def run_title(cwd: str | None) -> str:
    """The session's name in Slack and `hitl-bot runs`: the project folder it runs in
    (its last part; the whole path would show the person's home to the channel)."""
    folder = PurePath(cwd).name if cwd else ""
    folder = "".join(c for c in folder if c.isprintable())
    if not folder:
        return msg.RUN_TITLE_NO_FOLDER
    return msg.RUN_TITLE.format(folder=folder[: msg.RUN_TITLE_FOLDER_MAX])


def _stopped(call: HookCall, exc: RunStopped) -> str:
    if exc.actor:
        return msg.STOPPED_BY.format(actor=exc.actor, run=call.session_id)
    return msg.STOPPED.format(run=call.session_id)


def _why_allowed(req: ActionRequest) -> str:
    res = req.resolution
    if res is None or res.reason_code == SystemReason.NO_REVIEW:
        return msg.ALLOWED_FREE.format(tool=req.tool, id=req.id)
    if res.actor == SYSTEM:  # nobody decided, and the tier's default is to approve
        return msg.ALLOWED_BY_DEFAULT.format(tool=req.tool, id=req.id)
    if req.original_hash is not None:
        return msg.ALLOWED_EDITED.format(tool=req.tool, actor=res.actor, id=req.id)
    return msg.ALLOWED.format(tool=req.tool, actor=res.actor, id=req.id)


async def _handed_over(gate: Gate, req: ActionRequest) -> None:
    """Close the claimed request: Claude Code runs the call and never tells us how it
    went. A report that cannot be written is logged, never raised: the call is allowed,
    and the request's execution deadline flags it for a person."""
    try:
        await gate.report_executed(req.id, ok=True, detail=msg.AUDIT_HANDED_OVER)
    except HitlError as exc:
        log.warning("report_failed", extra={"request_id": req.id, "error": str(exc)})
