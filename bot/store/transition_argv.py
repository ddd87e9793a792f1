"""The TRANSITION script's ARGV, and the log lines of a create: kept beside
bot/store/requests.py, which sends them."""

from __future__ import annotations

import json
import logging

from bot.core.machine import apply
from bot.core.models import SYSTEM, ActionRequest, Decision
from bot.core.states import Event, State
from bot.errors import HitlError
from bot.signing import Signer

WAKE_TTL_S = 86_400
log = logging.getLogger("bot.store.requests")  # the lines a transition has always logged


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


def timeout_extras(
    signer: Signer | None,
    timers: list[tuple[str, int]],
    reqs: list[ActionRequest | None],
    now: int,
) -> list[list[str | int]]:
    """ARGV 16 to 20 of each fenced timer: its seal, over the payload hash it stands at
    and the state the machine moves it to (the requests read in one pipeline; the fence
    makes the script a no-op if the request moved since). Without a signer the timers
    are marked to leave auto-approvals undone."""
    if signer is None:
        return [["", "", "", "", "1"] for _ in timers]
    out: list[list[str | int]] = []
    for (rid, fence), req in zip(timers, reqs, strict=True):
        if req is None:
            out.append(["", "", "", "", ""])
            continue
        d = Decision(event=Event.TIMEOUT, fence=fence)
        seal = signer.seal(
            request_id=rid,
            version=fence + 1,
            event=Event.TIMEOUT.value,
            actor=SYSTEM,
            payload_hash=req.payload_hash,
            at=now,
            to_state=predicted_state(req, d, now),
        )
        out.append(["", "", seal, "", ""])
    return out


def log_created(req: ActionRequest, requester: str, claimer: str | None) -> None:
    """The same log lines a create and a separate claim would have written."""
    moves: list[tuple[str, str, str | None, str, int]] = [
        ("create", requester, None, req.state.value, req.version)
    ]
    if claimer is not None:
        approved = State.APPROVED.value
        moves = [
            ("create", requester, None, approved, req.version - 1),
            ("claim", claimer, approved, req.state.value, req.version),
        ]
    for event, actor, was, to, version in moves:
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


def argv_of(d: Decision, now: int, new_args: str, new_hash: str) -> list[str | int]:
    """The TRANSITION script's ARGV, in the order documented there."""
    return [
        now,
        d.event.value,
        d.actor,
        json.dumps(list(d.actor_groups)),
        d.payload_hash or "",
        d.view_hash or "",
        d.reason_code or "",
        d.text or "",
        new_args,
        new_hash,
        "" if d.fence is None else d.fence,
        d.detail or "",
        "1" if d.has_compensation else "0",
        WAKE_TTL_S,
        d.via or "",
    ]
