"""What `serve` signs, and which signatures make a request claimable. Pure: the bytes are
built here and the signature check is passed in (bot/signing/keys.py holds the keys).

A seal is kept with the decision it covers, as one string:
`KEY_ID.VERSION.EVENT.SIGNATURE` (the signature unpadded urlsafe base64). The signed bytes
name the request, the version the decision moved it to, the event, the actor, the payload
hash that runs and the time, so a seal taken from one decision proves nothing about any
other request, version or payload.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.core.args.payload import payload_hash
from bot.core.models import SYSTEM, ActionRequest
from bot.core.states import Event, State, SystemReason

DOMAIN = "hitl-decision/2"  # changes whenever the signed bytes do
HEADS_DOMAIN = "hitl-heads/1"
FORGED = "forged_decision"  # the audit's reason code, and the API's error code

# A person's decisions and the policy's defaults: the entries `audit verify` wants sealed.
SEALED_EVENTS = frozenset({Event.APPROVE.value, Event.EDIT_AND_APPROVE.value, Event.REJECT.value})
# The rejecting default may be applied unsealed: a worker without the key ends its own
# wait with it (bot/agent/gate.py). It runs nothing, so only a seal it carries is checked.
DEFAULTS = frozenset({State.AUTO_APPROVED.value})
OPTIONAL = frozenset({State.AUTO_REJECTED.value})
NO_REVIEW = SystemReason.NO_REVIEW.value  # a policy exemption recorded at create

# key id, signed bytes, signature -> valid
Verify = Callable[[str, bytes, bytes], bool]


def decision_bytes(
    *,
    request_id: str,
    version: int,
    event: str,
    actor: str,
    payload_hash: str,
    at: int,
    to_state: str,
) -> bytes:
    """The canonical bytes a decision's signature covers (JSON array, ASCII, no spaces).
    `to_state`: the state the decision moved the request to, so a seal of a timeout that
    rejected, or of one approval of a quorum, never stands for an approval."""
    fields = [DOMAIN, request_id, version, event, actor, payload_hash, at, to_state]
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=True).encode()


def heads_bytes(*, key_id: str, at: int, heads: Sequence[tuple[str, str, int]]) -> bytes:
    """The canonical bytes of an exported set of chain heads: (request id, head, seq)."""
    rows = sorted([rid, head, seq] for rid, head, seq in heads)
    return json.dumps([HEADS_DOMAIN, key_id, at, rows], separators=(",", ":")).encode()


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Seal:
    key_id: str
    version: int
    event: str
    signature: bytes

    def encode(self) -> str:
        return f"{self.key_id}.{self.version}.{self.event}.{b64(self.signature)}"

    @classmethod
    def decode(cls, text: str) -> Seal | None:
        """None for anything that is not a well-formed seal."""
        parts = text.split(".")
        if len(parts) != 4 or not parts[1].isdigit():
            return None
        try:
            sig = unb64(parts[3])
        except (binascii.Error, ValueError):
            return None
        return cls(parts[0], int(parts[1]), parts[2], sig)


def seal_valid(
    seal_text: str | None,
    verify: Verify,
    *,
    request_id: str,
    event: str,
    actor: str,
    payload_hash: str,
    at: int,
    to_state: str,
    version: int | None = None,
) -> bool:
    """Whether `seal_text` is a valid signature of exactly this decision. `version`: the one
    the decision must have moved the request to (None: the seal's own is taken)."""
    seal = Seal.decode(seal_text or "")
    if seal is None or seal.event != event or (version is not None and seal.version != version):
        return False
    signed = decision_bytes(
        request_id=request_id,
        version=seal.version,
        event=event,
        actor=actor,
        payload_hash=payload_hash,
        at=at,
        to_state=to_state,
    )
    return verify(seal.key_id, signed, seal.signature)


def claim_problem(req: ActionRequest, verify: Verify, *, exempt: bool) -> str | None:
    """Why an executor must not claim `req` (approved or auto_approved), or None.

    The decision that approved it must be sealed by a key the executor trusts, at the
    version the request stands at now (so an old seal cannot approve it again), and so
    must every approval counted towards its quorum. `exempt`: the executor's own policy
    lets this call run without a person; only then may an unsealed policy exemption
    (`no_review`, written at create by a process without the key) be claimed.
    """
    res = req.resolution
    if res is None:
        return "no decision is recorded"
    # The hash every seal covers must be the one of the call that would run.
    if payload_hash(req.tool, req.args) != req.payload_hash:
        return "its arguments are not the ones the decision covers"
    if res.event == Event.APPROVE and res.reason_code == NO_REVIEW and res.actor == SYSTEM:
        if exempt and not res.seal:
            return None
    elif res.event not in (Event.APPROVE, Event.EDIT_AND_APPROVE, Event.TIMEOUT):
        return f"the recorded decision is {res.event.value}, not an approval"
    rid, phash = req.id, req.payload_hash
    # The seal must name the state being claimed: a timeout that rejected or escalated, or
    # one approval short of a quorum, was sealed with the state it really led to.
    if not seal_valid(
        res.seal,
        verify,
        request_id=rid,
        event=res.event.value,
        actor=res.actor,
        payload_hash=phash,
        at=res.at,
        to_state=req.state.value,
        version=req.version,
    ):
        return f"the decision by {res.actor} is not signed by this bot's key"
    for a in req.approvals:
        seal = Seal.decode(a.seal or "")
        ev = seal.event if seal is not None else ""
        approving = ev in (Event.APPROVE.value, Event.EDIT_AND_APPROVE.value)
        signed = approving and any(
            seal_valid(
                a.seal,
                verify,
                request_id=rid,
                event=ev,
                actor=a.actor,
                payload_hash=phash,
                at=a.at,
                to_state=to,
            )
            for to in (State.PENDING_REVIEW.value, State.APPROVED.value)
        )
        if not signed:
            return f"the approval by {a.actor} is not signed by this bot's key"
    return None


def unsealed(rid: str, lines: Sequence[str], verify: Verify) -> list[tuple[int, str]]:
    """Each audit entry of one request that records a decision without a valid seal:
    a person's approve, edit or reject, or an auto-approval (seq, why). A policy exemption
    recorded unsealed (`no_review` by a process without the key) is the policy's, not a
    decision, and is not counted (executors judge it by their own policy); nor is an
    unsealed auto-rejection, which runs nothing. A seal either carries must be valid."""
    found: list[tuple[int, str]] = []
    for line in lines:
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue  # the chain check names it
        if not isinstance(e, dict) or e.get("kind") != "transition":
            continue
        event, to = str(e.get("event", "")), str(e.get("to", ""))
        default = event == Event.TIMEOUT.value and to in DEFAULTS | OPTIONAL
        if not (event in SEALED_EVENTS or default):
            continue
        if not e.get("seal") and (e.get("reason_code") == NO_REVIEW or to in OPTIONAL):
            continue
        ok = seal_valid(
            e.get("seal"),
            verify,
            request_id=rid,
            event=event,
            actor=str(e.get("actor") or ""),
            payload_hash=str(e.get("payload_hash") or ""),
            at=int(e.get("at") or 0),
            to_state=to,
            version=int(e.get("version") or 0),
        )
        if not ok:
            why = "unsigned" if not e.get("seal") else "not signed by this bot's key"
            found.append((int(e.get("seq") or 0), f"{event} by {e.get('actor')}: {why}"))
    return found


def replay_problem(req: ActionRequest, lines: Sequence[str]) -> str | None:
    """Why a sealed approval is not the request's latest move, or None. A seal names the
    version it moved the request to, but a hash rewritten by hand (state and version put
    back after the call ran) would carry it again: the history's last transition must be
    the sealed decision itself."""
    seal = req.resolution.seal if req.resolution else None
    if not seal:
        return None
    for line in reversed(lines):
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            return "its audit history cannot be read"
        if isinstance(e, dict) and e.get("kind") == "transition":
            if e.get("seal") == seal:
                return None
            return f"its history moved on after that decision (last: {e.get('event')})"
    return "its audit history does not record that decision"
