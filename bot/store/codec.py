"""ActionRequest <-> the flat Redis hash the Lua scripts read and write.

Only this module knows the field names; the scripts use the same names.
Structured fields are JSON; the arguments are stored as compact JSON in the
caller's key order (what the approver reads; the hash is of the sorted form)
and never decoded by Lua, so Lua's number formatting cannot alter a payload.
"""

from __future__ import annotations

import json
from typing import Any

from bot.core.models import ActionRequest, Approval, Level, Resolution
from bot.core.payload import stored_args


def _s(v: object) -> str:
    return "" if v is None else str(v)


def to_hash(req: ActionRequest) -> dict[str, str]:
    res = req.resolution
    return {
        "id": req.id,
        "tool": req.tool,
        "args": stored_args(req.args),
        "payload_hash": req.payload_hash,
        "original_hash": _s(req.original_hash),
        "run_id": _s(req.run_id),
        "requester": req.requester,
        "obo": _s(req.on_behalf_of),
        "channel": _s(req.channel),
        "risk": req.risk.value,
        "created_at": str(req.created_at),
        "state": req.state.value,
        "version": str(req.version),
        "expires_at": _s(req.expires_at),
        "level": str(req.level),
        "levels": json.dumps([lv.model_dump() for lv in req.levels], separators=(",", ":")),
        "approvers": json.dumps(list(req.approvers)),
        "quorum": str(req.quorum),
        "self_approval": "1" if req.self_approval else "0",
        "allow_edit": "1" if req.allow_edit else "0",
        "on_exhausted": req.on_exhausted.value,
        "claim_ms": str(req.claim_timeout_ms),
        "exec_ms": str(req.execution_timeout_ms),
        "approvals": json.dumps([[a.actor, a.at] for a in req.approvals]),
        "res_actor": _s(res and res.actor),
        "res_at": _s(res and res.at),
        "res_event": _s(res and res.event.value),
        "res_reason": _s(res and res.reason_code),
        "res_text": _s(res and res.text),
        "res_view": _s(res and res.view_hash),
        "detail": _s(req.detail),
        "idem": _s(req.idempotency_key),
        "audit_head": req.audit_head,
    }


def _opt(v: str | None) -> str | None:
    return v if v else None


def _list(raw: str) -> list[Any]:
    value = json.loads(raw or "[]")
    return value if isinstance(value, list) else []  # Lua's cjson writes [] as {}


def from_hash(h: dict[str, str]) -> ActionRequest:
    res = None
    if h.get("res_actor"):
        res = Resolution(
            actor=h["res_actor"],
            at=int(h["res_at"]),
            event=h["res_event"],  # type: ignore[arg-type]
            reason_code=_opt(h.get("res_reason")),
            text=_opt(h.get("res_text")),
            view_hash=_opt(h.get("res_view")),
        )
    return ActionRequest(
        id=h["id"],
        tool=h["tool"],
        args=json.loads(h["args"]),
        payload_hash=h["payload_hash"],
        original_hash=_opt(h.get("original_hash")),
        run_id=_opt(h.get("run_id")),
        requester=h["requester"],
        on_behalf_of=_opt(h.get("obo")),
        channel=_opt(h.get("channel")),
        risk=h["risk"],  # type: ignore[arg-type]
        created_at=int(h["created_at"]),
        state=h["state"],  # type: ignore[arg-type]
        version=int(h["version"]),
        expires_at=int(h["expires_at"]) if h.get("expires_at") else None,
        level=int(h["level"]),
        levels=tuple(Level.model_validate(x) for x in _list(h["levels"])),
        approvers=tuple(_list(h["approvers"])),
        quorum=int(h["quorum"]),
        self_approval=h["self_approval"] == "1",
        allow_edit=h["allow_edit"] == "1",
        on_exhausted=h["on_exhausted"],  # type: ignore[arg-type]
        claim_timeout_ms=int(h["claim_ms"]),
        execution_timeout_ms=int(h["exec_ms"]),
        approvals=tuple(Approval(actor=a, at=int(t)) for a, t in _list(h["approvals"])),
        resolution=res,
        detail=_opt(h.get("detail")),
        idempotency_key=_opt(h.get("idem")),
        audit_head=h.get("audit_head", ""),
    )


def reply(raw: str) -> dict[str, str]:
    """A script's JSON reply (the item's hash as an object) as a dict."""
    data = json.loads(raw)
    return data if isinstance(data, dict) else {}  # cjson writes an empty table as {}
