"""The short texts about one request: its line in a run's thread for each event, and the
ephemeral that tells a person why their click changed nothing."""

from __future__ import annotations

from typing import Any

from bot import messages as msg
from bot.core.candidates import chosen
from bot.core.models import ActionRequest
from bot.core.states import Event
from bot.core.states import State as S
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks.call import free_item, free_line
from bot.slack.blocks.render import reason_words, state_label, waiting_for


def status_line(req: ActionRequest, event: str) -> str:
    """One short line for the run's thread, saying what `event` just did to `req`."""
    if event == "no_review":
        line = free_line([free_item(req)])
    elif event in ("approve", "edit_and_approve") and req.state in (S.PENDING_REVIEW, S.APPROVED):
        line = _approval_line(req, event)
    elif event in ("timeout", "reassign") and req.state == S.PENDING_REVIEW:
        line = smsg.SL_ESCALATED.format(level=req.level + 1, who=waiting_for(req))
    elif event == "timeout" and req.state == S.CANCELLED:
        line = smsg.SL_NOT_CLAIMED
    elif req.state == S.PENDING_REVIEW:
        line = smsg.SL_CREATED.format(
            tool=esc.code(req.tool), risk=req.risk.value.upper(), who=waiting_for(req)
        )
    else:
        line = _state_line(req)
    return esc.truncate(line, esc.MESSAGE_TEXT)


def _approval_line(req: ActionRequest, event: str) -> str:
    actor = req.approvals[-1].actor if req.approvals else getattr(req.resolution, "actor", "?")
    n, total = len(req.approvals), req.quorum
    if event == "edit_and_approve" and (pick := chosen(req)) is not None:
        return smsg.SL_CHOSEN.format(
            option=pick + 1,
            who=esc.user(actor),
            n=n,
            total=total,
            hash=f"`{req.payload_hash[:12]}`",
        )
    if event == "edit_and_approve":
        return smsg.SL_EDITED.format(
            who=esc.user(actor), n=n, total=total, hash=f"`{req.payload_hash[:12]}`"
        )
    if req.state == S.PENDING_REVIEW:
        return smsg.SL_APPROVAL_PARTIAL.format(
            who=esc.user(actor), n=n, total=total, left=total - n
        )
    return smsg.SL_APPROVED.format(who=esc.user(actor), n=n, total=total)


def _state_line(req: ActionRequest) -> str:
    res = req.resolution
    detail = esc.fit(req.detail, 500) if req.detail else smsg.SL_NO_REPORT
    if res is not None and res.event == Event.REJECT and req.state in (S.REJECTED, S.CANCELLED):
        return smsg.SL_REJECTED.format(who=esc.user(res.actor), why=reason_words(res, 500))
    if req.state == S.CANCELLED:
        why = f": {esc.fit(res.text, 500)}" if res is not None and res.text else ""
        who = esc.user(res.actor if res else "system")
        code = (res.reason_code if res else None) or ""
        return smsg.SL_WITHDRAWN.get(code, smsg.SL_CANCELLED).format(who=who, text=why)
    if req.state in (S.AUTO_APPROVED, S.AUTO_REJECTED):
        return smsg.SL_EXHAUSTED[req.state.value]
    if req.state in (S.FAILED, S.ROLLBACK_PENDING, S.MANUAL_INTERVENTION):
        return smsg.FAILURE_LINES[req.state.value].format(detail=detail)
    line = smsg.STATUS_LINES.get(req.state.value, state_label(req))
    # Only the outcome carries the executor's report: the line of an earlier event is
    # rendered from the latest request, whose detail did not exist yet at that event.
    # It is the executor's claim, which may not match what was approved: said as such.
    if req.state == S.COMPLETED and req.detail:
        return smsg.SL_REPORTED.format(line=line, detail=esc.fit(req.detail, 500))
    return line


def refusal(kind: str, **details: Any) -> str:
    """The ephemeral answer to a click that changed nothing, and why. `detail` may be
    a finished sentence (an error's message); structured details give a richer text."""
    if kind not in smsg.REFUSAL_PREFIX:
        raise ValueError(f"unknown refusal {kind!r}; one of {', '.join(smsg.REFUSAL_PREFIX)}")
    d = details
    if kind == "already_resolved" and "by" in d and "at" in d:
        text = msg.ALREADY_RESOLVED.format(
            how=esc.fit(str(d.get("how", "decided")), 100), by=esc.user(str(d["by"])),
            at=esc.date(int(d["at"])),
        )  # fmt: skip
    elif kind == "expired" and "at" in d:
        default = esc.fit(str(d.get("default", "")), 100) or smsg.STATE_LABELS["auto_rejected"]
        text = msg.EXPIRED.format(at=esc.date(int(d["at"])), default=default)
    elif kind == "stale_payload" and "seen" in d and "current" in d:
        text = msg.STALE_PAYLOAD.format(
            seen=f"`{esc.mrkdwn(str(d['seen'])[:12])}`",
            current=f"`{esc.mrkdwn(str(d['current'])[:12])}`",
        )
    elif kind == "not_eligible" and "allowed" in d:
        actor = esc.user(str(d["actor"])) if d.get("actor") else smsg.REFUSAL_YOU
        who = esc.join_fit([esc.principal(str(a)) for a in d["allowed"]], 1500) or smsg.NOBODY
        why = msg.WHY_REQUESTER if d.get("own") else msg.WHY_NOT_APPROVER
        text = msg.NOT_ELIGIBLE.format(actor=actor, why=why.format(approvers=who))
    elif kind == "not_eligible" and "why" in d:
        actor = esc.user(str(d["actor"])) if "actor" in d else smsg.REFUSAL_YOU
        text = msg.NOT_ELIGIBLE.format(actor=actor, why=esc.fit(str(d["why"]), 1000))
    elif "detail" in d:
        text = esc.fit(str(d["detail"]), 2000)
    else:
        text = smsg.REFUSAL_DEFAULTS[kind]
    return esc.truncate(f"{smsg.REFUSAL_PREFIX[kind]} {text}", esc.MESSAGE_TEXT)
