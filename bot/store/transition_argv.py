"""What bot/store/requests.py sends the transition scripts and logs of them: each
script's ARGV, the seals serve puts in them, the approval a policy exemption records
at create, and the log lines of a transition."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.machine import apply
from bot.core.models import SYSTEM, ActionRequest, Decision, Resolution
from bot.core.proof.fence import new_claim_token
from bot.core.states import HUMAN_EVENTS, Event, State, SystemReason
from bot.errors import HitlError
from bot.signing import Signer

log = logging.getLogger("bot.store.requests")  # a transition's lines, as requests.py logs them


def predicted_state(req: ActionRequest, d: Decision, now: int) -> str:
    """The state `d` moves `req` to, as the pure machine (kept in step with the script)
    has it: the first move of `d`'s own event, which the script's audit entry seals. A
    refused or stale decision: the state it stands at (the script does nothing)."""
    try:
        step = apply(req, d, now)
    except HitlError:
        return req.state.value
    for r in step.records:
        if r.event == d.event:
            return r.to_state.value
    return step.request.state.value


def exempted(
    signer: Signer | None, req: ActionRequest, now: int
) -> tuple[ActionRequest, list[str]]:
    """The request approved by the policy at creation, and its audit record: exempt
    tools still leave a trail (created, then approved), sealed when serve creates it."""
    seal = None
    if signer is not None:
        seal = signer.seal(
            request_id=req.id,
            version=req.version,
            event=Event.APPROVE.value,
            actor=SYSTEM,
            payload_hash=req.payload_hash,
            at=now,
            to_state=State.APPROVED.value,
        )
    resolution = Resolution(
        actor=SYSTEM,
        at=now,
        event=Event.APPROVE,
        reason_code=SystemReason.NO_REVIEW.value,
        seal=seal,
    )
    approved = req.model_copy(
        update={
            "state": State.APPROVED,
            "expires_at": now + req.claim_timeout_ms,
            "resolution": resolution,
        }
    )
    approve = [Event.APPROVE.value, State.PENDING_REVIEW.value, State.APPROVED.value]
    return approved, [*approve, SystemReason.NO_REVIEW.value, *([seal] if seal else [])]


def sealed(
    signer: Signer,
    rid: str,
    d: Decision,
    now: int,
    *,
    at: int,
    new_hash: str,
    read: str | None,
    to: str,
) -> Signed:
    """`d` sealed at the version it moves the request to (one past a fenced timer's fence,
    else past `at`, the version read), over the payload it decides on (an edit's
    `new_hash`, else the hash the person saw, else `read`, the stored one) and the state
    `to` it leads to."""
    at = at if d.fence is None else d.fence
    human = d.event != Event.TIMEOUT
    seal = signer.seal(
        request_id=rid,
        version=at + 1,
        event=d.event.value,
        actor=d.actor if human else SYSTEM,
        payload_hash=new_hash or (d.payload_hash if human else None) or read or "",
        at=now,
        to_state=to,
    )
    # A fenced timer is its own expected version: the script's fence answers 'noop'.
    return Signed(expect=str(at) if d.fence is None else "", seal=seal)


def timeout_seals(
    signer: Signer | None,
    timers: list[tuple[str, int]],
    reqs: list[ActionRequest | None],
    now: int,
) -> list[Signed]:
    """Each fenced timer's seal, over the payload hash it stands at and the state the
    machine moves it to (the requests read in one pipeline; the fence makes the script a
    no-op if the request moved since). Without a signer the timers are marked to leave
    auto-approvals undone."""
    if signer is None:
        return [Signed(leave=True) for _ in timers]
    out: list[Signed] = []
    for (rid, fence), req in zip(timers, reqs, strict=True):
        if req is None:
            out.append(Signed())
            continue
        d = Decision(event=Event.TIMEOUT, fence=fence)
        to = predicted_state(req, d, now)
        out.append(sealed(signer, rid, d, now, at=fence, new_hash="", read=req.payload_hash, to=to))
    return out


def log_moved(rid: str, d: Decision, h: dict[str, str], rest: Sequence[Any]) -> None:
    """The log lines of a transition that took, one per step the audit records (a
    timeout that escalates is `timeout` then `reassign`): `h` the script's reply,
    `rest` what follows it (the state it moved from, then the steps as JSON, or '' for
    the one step of `d`'s own event: the script spares encoding what the caller knows)."""
    was = str(rest[0]) if rest else None
    steps = json.loads(rest[1]) if len(rest) > 1 and rest[1] else []
    if not isinstance(steps, list) or not steps:  # cjson writes an empty list as {}
        steps = [[d.event.value, was, h["state"]]]
    for event, before, after in steps:
        log.info(
            "transition",
            extra={
                "request_id": rid,
                "event": event,
                "actor": d.actor,
                "from_state": before,
                "to_state": after,
                "version": int(h["version"]),
                "tool": h["tool"],
                "run_id": h.get("run_id") or None,
            },
        )


def log_created(req: ActionRequest, requester: str, claimer: str | None, *, exempt: bool) -> None:
    """A create's lines, one per step its audit records (as `log_moved`'s): created, then
    approved by the policy if it exempts the call, then claimed if an executor took it in
    the same round trip (its step one version past the others, as the audit has it)."""
    review, approved = State.PENDING_REVIEW.value, State.APPROVED.value
    made = req.version - 1 if claimer is not None else req.version
    steps: list[tuple[str, str, str | None, str, int]] = [
        (Event.CREATE.value, requester, None, review, made)
    ]
    if exempt:
        steps.append((Event.APPROVE.value, SYSTEM, review, approved, made))
    if claimer is not None:
        steps.append((Event.CLAIM.value, claimer, approved, req.state.value, req.version))
    for event, actor, was, to, version in steps:
        log.info(
            "transition",
            extra={
                "request_id": req.id,
                "event": event,
                "actor": actor,
                "from_state": was,
                "to_state": to,
                "version": version,
                "tool": req.tool,
                "run_id": req.run_id,
            },
        )


def log_refused(req: ActionRequest, d: Decision, reason: str) -> None:
    log.info(
        "refused",
        extra={
            "request_id": req.id,
            "event": d.event.value,
            "actor": d.actor,
            "reason": reason,
            "state": req.state.value,
            "tool": req.tool,
            "run_id": req.run_id,
        },
    )


@dataclass(frozen=True)
class Signed:
    """What a transition carries beside the decision: `expect`, '' or the version the
    caller signed or checked (moved since: the script answers 'moved'); `seal`, serve's
    signature of the decision; `leave`, a timeout without the key leaves an
    auto-approval undone."""

    expect: str = ""
    seal: str = ""
    leave: bool = False


def argv_of(
    d: Decision,
    now: int,
    signed: Signed,
    *,
    lean: bool = False,
    new_args: str = "",
    new_hash: str = "",
    forged: str = "",
) -> list[str | int]:
    """The ARGV of `d`'s script (bot/store/scripts `script_for`), in the order its
    first lines name them. `lean`: on 'ok' the script replies with id, state, version,
    tool and run_id only; `forged`, on a claim: why the executor refuses the decision.
    A claim carries its token, a report the fence its claim handed it (bot/core/proof/fence.py)."""
    head: list[str | int] = [now, d.actor, signed.expect, "1" if lean else ""]
    if d.event in HUMAN_EVENTS:
        head.insert(1, d.event.value)
        return [
            *head,
            json.dumps(list(d.actor_groups)),
            d.payload_hash or "",
            d.view_hash or "",
            d.reason_code or "",
            d.text or "",
            new_args,
            new_hash,
            d.via or "",
            signed.seal,
            "1" if d.foreign else "",
        ]
    if d.event == Event.TIMEOUT:
        fence = "" if d.fence is None else d.fence
        return [*head, fence, signed.seal, "1" if signed.leave else ""]
    if d.event == Event.CLAIM:
        # Every claim stores a fence: a caller that chose no token (it will not retry
        # the claim) gets one of the store's.
        return [*head, forged, d.claim_token or new_claim_token()]
    if d.event == Event.CANCEL:
        return [*head, d.reason_code or "", d.text or "", d.view_hash or ""]
    head.insert(1, d.event.value)
    compensation = "1" if d.has_compensation else "0"
    return [*head, d.detail or "", compensation, d.claim_fence or ""]
