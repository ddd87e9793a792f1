"""The requests of a period as calls to judge again: what `policy diff` replays and
what `policy shadow-report` lists. Read-only, for an operator's look; never a hot path.

A request keeps everything its create was judged on (tool, arguments, requester,
channel, the caller's raise of the tier in `risk_asked`) and how it ended (the
resolution fields), so no audit line needs decoding here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from bot.core.models import SYSTEM, RiskTier
from bot.core.policydiff import Outcome, Recorded
from bot.core.states import Event, State, SystemReason
from bot.core.verdicts import Call, ShadowVerdict
from bot.store import keys
from bot.store.figures.shadow import RISK_ASKED, SHADOW
from bot.store.requests import RequestStore

BATCH = 500  # requests read per round trip

# The hash fields read: the call, how it ended, and the shadow's verdict.
FIELDS = (
    "id", "tool", "args", "requester", "obo", "channel", "risk", "risk_asked", "state",
    "created_at", "res_actor", "res_at", "res_event", "res_reason", "original_hash", "shadow",
)  # fmt: skip


async def _rows(store: RequestStore, since_ms: int, until_ms: int | None) -> list[dict[str, str]]:
    redis: Redis = store.redis
    ids = await store.ids_between(since_ms, until_ms)
    rows: list[dict[str, str]] = []
    for i in range(0, len(ids), BATCH):
        pipe = redis.pipeline(transaction=False)
        for rid in ids[i : i + BATCH]:
            pipe.hmget(keys.request(rid), list(FIELDS))
        for got in cast(list[list[str | None]], await pipe.execute()):
            row = {k: v or "" for k, v in zip(FIELDS, got, strict=True)}
            if row["id"]:  # gone since the index was read
                rows.append(row)
    return rows


def _outcome(row: dict[str, str]) -> tuple[Outcome, str]:
    event, state = row["res_event"], row["state"]
    if row["res_reason"] == SystemReason.NO_REVIEW:  # approved by the policy at creation
        return Outcome.NO_REVIEW, "approved"
    if event in (Event.APPROVE, Event.EDIT_AND_APPROVE) and row["res_actor"] != SYSTEM:
        return Outcome.PERSON, "approved"
    if event == Event.REJECT:
        return Outcome.PERSON, "rejected"
    if event == Event.TIMEOUT:
        default = State.AUTO_REJECTED if state == State.AUTO_REJECTED else State.AUTO_APPROVED
        return Outcome.DEFAULT, default.value
    if state == State.PENDING_REVIEW:
        return Outcome.OPEN, state
    return Outcome.OTHER, state


def recorded(row: dict[str, str]) -> Recorded:
    """One request's row as the call it was and what became of it."""
    outcome, result = _outcome(row)
    created = int(row["created_at"])
    call = Call(
        tool=row["tool"],
        args=json.loads(row["args"]),
        requester=row["requester"],
        at=created,
        risk=RiskTier(row[RISK_ASKED]) if row[RISK_ASKED] else None,
        channel=row["channel"] or None,
        on_behalf_of=row["obo"] or None,
    )
    return Recorded(
        id=row["id"],
        call=call,
        tier=RiskTier(row["risk"]),
        outcome=outcome,
        result=result,
        decided_by=row["res_actor"] if outcome == Outcome.PERSON else None,
        waited_ms=int(row["res_at"]) - created if row["res_at"] else None,
        edited=bool(row["original_hash"]),
    )


async def history(
    store: RequestStore, since_ms: int, until_ms: int | None = None
) -> list[Recorded]:
    """Every request created in the window, oldest first."""
    return [recorded(row) for row in await _rows(store, since_ms, until_ms)]


@dataclass(frozen=True)
class Shadowed:
    """A request the shadow policy judged, beside what the real one did."""

    id: str
    tool: str
    requester: str
    created_at: int
    tier: RiskTier  # the real policy's
    review: bool  # the real policy's
    shadow: ShadowVerdict


async def shadowed(
    store: RequestStore, since_ms: int, until_ms: int | None = None
) -> list[Shadowed]:
    """Every request of the window that carries a shadow verdict, oldest first."""
    out = []
    for row in await _rows(store, since_ms, until_ms):
        verdict = ShadowVerdict.loads(row[SHADOW]) if row[SHADOW] else None
        if verdict is None:
            continue
        out.append(
            Shadowed(
                id=row["id"],
                tool=row["tool"],
                requester=row["requester"],
                created_at=int(row["created_at"]),
                tier=RiskTier(row["risk"]),
                review=_outcome(row)[0] != Outcome.NO_REVIEW,
                shadow=verdict,
            )
        )
    return out
