"""ActionRequest <-> the flat Redis hash the Lua scripts read and write.

Only this module knows the field names; the scripts use the same names.
Structured fields are JSON; the arguments are stored as compact JSON in the
caller's key order (what the approver reads; the hash is of the sorted form)
and never decoded by Lua, so Lua's number formatting cannot alter a payload.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any, cast

import orjson

from bot.core.args.payload import stored_args
from bot.core.candidates import candidate_hashes
from bot.core.models import ActionRequest, Approval, Level, Resolution, RiskTier
from bot.core.states import Event, State

# Fields that are often empty. An empty one is not stored (a dozen are empty while a
# request waits: ~140 B of server memory each request); a read, in Python or in the
# scripts' `load`, gives '' for a missing one.
OPTIONAL = (
    "original_hash",
    "original_args",
    "run_id",
    "obo",
    "channel",
    "expires_at",
    "res_actor",
    "res_at",
    "res_event",
    "res_reason",
    "res_text",
    "res_view",
    "res_seal",
    "detail",
    "idem",
    "owner",
    "fence",
    "cands",
    "cand_hashes",
)
_OPTIONAL = frozenset(OPTIONAL)

# A request's review terms: what its tier and tool set for the review (the chain, who may
# approve, the quorum, the timeouts, the default when nobody answers). Requests of one
# tier share them, so a shard keeps one copy per distinct set (`keys.terms`) and a request
# stores only a reference to its content (~230 B less per pending request,
# bench/memory_per_request.py); a read fills them in from the copy.
TERMS = (
    "levels",
    "approvers",
    "quorum",
    "self_approval",
    "allow_edit",
    "on_exhausted",
    "claim_ms",
    "exec_ms",
)
_TERMS = frozenset(TERMS)
REF = "terms"  # the request field naming its terms
# Set on a request once someone waited on it (bot/store/waiting.py): its transitions then
# write to its wake stream; one nobody waits on, most, costs them no command at all.
# Not part of the request (`from_hash` leaves it out).
WATCHED = "watched"
REF_LEN = 16  # hex characters of the sha1 of the terms' JSON (Lua has sha1 built in)
# What a request whose terms copy is gone or damaged is judged by: nobody may approve,
# no level to escalate to, the rejecting default; it can still time out and end.
GONE = {
    "levels": "[]",
    "approvers": "[]",
    "quorum": "1",
    "self_approval": "0",
    "allow_edit": "0",
    "on_exhausted": State.AUTO_REJECTED.value,
    "claim_ms": "0",
    "exec_ms": "0",
}


def ref_of(text: str) -> str:
    """The name a copy of review terms is kept under: its content's hash. Reads and the
    scripts check a copy against it; CREATE also refuses a copy that differs from the
    stored one, so not even a collision could swap one set of terms for another."""
    return hashlib.sha1(text.encode()).hexdigest()[:REF_LEN]


@functools.lru_cache(maxsize=256)
def _terms(values: tuple[str, ...]) -> tuple[str, str]:
    text = json.dumps(dict(zip(TERMS, values, strict=True)), separators=(",", ":"))
    return ref_of(text), text


def split_terms(h: dict[str, str]) -> tuple[dict[str, str], str]:
    """A full hash as CREATE stores it: the terms replaced by their reference; and the
    terms' JSON, which CREATE keeps once per shard under that reference."""
    ref, text = _terms(tuple(h[k] for k in TERMS))
    body = {k: v for k, v in h.items() if k not in _TERMS}
    body[REF] = ref
    return body, text


def with_terms(h: dict[str, str], text: str) -> dict[str, str]:
    """The request's hash with its terms filled in from their stored JSON (only the
    terms: a copy cannot set any other field)."""
    terms = cast(dict[str, str], orjson.loads(text))
    return h | {k: terms.get(k, GONE[k]) for k in TERMS}


@functools.lru_cache(maxsize=256)
def _levels(levels: tuple[Level, ...]) -> str:
    """A chain as JSON, without a level's empty lists and unset pager (their defaults:
    the scripts read `lv.users or {}`). Requests of one tier share their chain, and
    dumping it is the costliest part of writing a request: each is dumped once."""
    dumped = [lv.model_dump(exclude_defaults=True) for lv in levels]
    return json.dumps(dumped, separators=(",", ":"))


def _s(v: object) -> str:
    return "" if v is None else str(v)


def to_hash(req: ActionRequest) -> dict[str, str]:
    """Every field with a value (the optional ones left out when empty), the terms inline:
    what a read gives back. `split_terms` makes what CREATE writes of it."""
    res = req.resolution
    h = {
        "id": req.id,
        "tool": req.tool,
        "args": stored_args(req.args),
        "payload_hash": req.payload_hash,
        "original_hash": _s(req.original_hash),
        "original_args": "" if req.original_args is None else stored_args(req.original_args),
        "run_id": _s(req.run_id),
        "requester": req.requester,
        # Over the API the owner is the requester: stored only where it differs (the
        # worker's calls), and a missing one read as the requester.
        "owner": "" if req.owner == req.requester else req.owner,
        "obo": _s(req.on_behalf_of),
        "channel": _s(req.channel),
        "risk": req.risk.value,
        "created_at": str(req.created_at),
        "state": req.state.value,
        "version": str(req.version),
        "expires_at": _s(req.expires_at),
        "level": str(req.level),
        "levels": _levels(req.levels),
        "approvers": json.dumps(list(req.approvers)),
        "quorum": str(req.quorum),
        "self_approval": "1" if req.self_approval else "0",
        "allow_edit": "1" if req.allow_edit else "0",
        "on_exhausted": req.on_exhausted.value,
        "claim_ms": str(req.claim_timeout_ms),
        "exec_ms": str(req.execution_timeout_ms),
        "approvals": json.dumps([_approval(a) for a in req.approvals]),
        "res_actor": _s(res and res.actor),
        "res_at": _s(res and res.at),
        "res_event": _s(res and res.event.value),
        "res_reason": _s(res and res.reason_code),
        "res_text": _s(res and res.text),
        "res_view": _s(res and res.view_hash),
        "res_seal": _s(res and res.seal),
        "detail": _s(req.detail),
        "idem": _s(req.idempotency_key),
        "fence": _s(req.fence),
        "audit_head": req.audit_head,
        # a proposal's candidates as stored args (never decoded by Lua), and their hashes,
        # the only calls DECIDE lets a choice approve
        "cands": "[" + ",".join(stored_args(c) for c in req.candidates) + "]"
        if req.candidates
        else "",
        "cand_hashes": json.dumps(list(candidate_hashes(req.tool, req.candidates)))
        if req.candidates
        else "",
    }
    return {k: v for k, v in h.items() if v or k not in _OPTIONAL}


def _approval(a: Approval) -> list[str | int]:
    """[actor, at] and, when serve signed it, the seal."""
    return [a.actor, a.at] if a.seal is None else [a.actor, a.at, a.seal]


def _opt(v: str | None) -> str | None:
    return v if v else None


def _list(raw: str) -> list[Any]:
    if raw in ("", "[]", "{}"):
        return []
    value = orjson.loads(raw)
    return value if isinstance(value, list) else []  # Lua's cjson writes [] as {}


def _level(x: dict[str, Any]) -> Level:
    if "pagerduty" in x or "opsgenie" in x:  # nested models: built, not just constructed
        return Level.model_validate(x)
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in x.items()}
    return Level.model_construct(None, **fields)


# Requests of one tier share their chain and approvers: each distinct JSON text is decoded
# once. Both results are immutable (frozen models, tuples), so sharing them is safe.
@functools.lru_cache(maxsize=256)
def _levels_from(raw: str) -> tuple[Level, ...]:
    return tuple(_level(x) for x in _list(raw))


@functools.lru_cache(maxsize=256)
def _names_from(raw: str) -> tuple[str, ...]:
    return tuple(_list(raw))


def from_hash(h: dict[str, str]) -> ActionRequest:
    """The request a script wrote. Fields are converted here (enums, integers, tuples)
    rather than by pydantic from the strings, which would be most of a transition's
    client CPU. Given typed values, pydantic's check in Rust costs less than `model_construct`,
    which sets each field in Python (tests/store/test_codec.py)."""
    res = None
    if h.get("res_actor"):
        res = Resolution(
            actor=h["res_actor"],
            at=int(h["res_at"]),
            event=Event(h["res_event"]),
            reason_code=_opt(h.get("res_reason")),
            text=_opt(h.get("res_text")),
            view_hash=_opt(h.get("res_view")),
            seal=_opt(h.get("res_seal")),
        )
    expires = h.get("expires_at")
    return ActionRequest(
        id=h["id"],
        tool=h["tool"],
        args=json.loads(h["args"]),
        payload_hash=h["payload_hash"],
        original_hash=_opt(h.get("original_hash")),
        original_args=json.loads(h["original_args"]) if h.get("original_args") else None,
        run_id=_opt(h.get("run_id")),
        requester=h["requester"],
        owner=h.get("owner") or h["requester"],
        on_behalf_of=_opt(h.get("obo")),
        channel=_opt(h.get("channel")),
        risk=RiskTier(h["risk"]),
        created_at=int(h["created_at"]),
        state=State(h["state"]),
        version=int(h["version"]),
        expires_at=int(expires) if expires else None,
        level=int(h["level"]),
        levels=_levels_from(h["levels"]),
        approvers=_names_from(h["approvers"]),
        quorum=int(h["quorum"]),
        self_approval=h["self_approval"] == "1",
        allow_edit=h["allow_edit"] == "1",
        on_exhausted=State(h["on_exhausted"]),
        claim_timeout_ms=int(h["claim_ms"]),
        execution_timeout_ms=int(h["exec_ms"]),
        approvals=tuple(
            Approval(actor=a[0], at=int(a[1]), seal=a[2] if len(a) > 2 else None)
            for a in _list(h["approvals"])
        ),
        resolution=res,
        detail=_opt(h.get("detail")),
        idempotency_key=_opt(h.get("idem")),
        fence=_opt(h.get("fence")),
        audit_head=h.get("audit_head", ""),
        candidates=tuple(json.loads(h["cands"])) if h.get("cands") else (),
    )


def created(sent: ActionRequest, got: dict[str, str]) -> ActionRequest:
    """The request CREATE wrote: what the caller sent, with what the script set (it
    answers with only those: state, version, deadline, audit head, a claim's fence)."""
    return sent.model_copy(
        update={
            "state": State(got["state"]),
            "version": int(got["version"]),
            "expires_at": int(got["expires_at"]) if got["expires_at"] else None,
            "audit_head": got["audit_head"],
            "fence": got.get("fence") or None,
        }
    )


def reply(raw: str | bytes) -> dict[str, str]:
    """A script's JSON reply (the item's hash as an object) as a dict. Every value in it
    is a string, so orjson (limited to 64-bit integers) reads it as json would, faster."""
    data = orjson.loads(raw)
    return data if isinstance(data, dict) else {}  # cjson writes an empty table as {}
