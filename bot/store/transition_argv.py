"""The TRANSITION script's ARGV, and the log lines of a create: kept beside
bot/store/requests.py, which sends them."""

from __future__ import annotations

import json
import logging

from redis.asyncio import Redis

from bot.core.models import SYSTEM, ActionRequest, Decision
from bot.core.states import Event, State
from bot.signing import Signer
from bot.store import keys

WAKE_TTL_S = 86_400
log = logging.getLogger("bot.store.requests")  # the lines a transition has always logged


async def timeout_extras(
    redis: Redis, signer: Signer | None, timers: list[tuple[str, int]], now: int
) -> list[list[str | int]]:
    """ARGV 16 to 20 of each fenced timer: its seal, over the payload hash it stands at
    (read in one pipeline; the fence makes the script a no-op if the request moved
    since). Without a signer the timers are marked to leave auto-approvals undone."""
    if signer is None:
        return [["", "", "", "", "1"] for _ in timers]
    pipe = redis.pipeline(transaction=False)
    for rid, _ in timers:
        pipe.hget(keys.request(rid), "payload_hash")
    hashes = await pipe.execute()
    out: list[list[str | int]] = []
    for (rid, fence), current in zip(timers, hashes, strict=True):
        seal = signer.seal(
            request_id=rid,
            version=fence + 1,
            event=Event.TIMEOUT.value,
            actor=SYSTEM,
            payload_hash=str(current or ""),
            at=now,
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
