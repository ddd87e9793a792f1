"""The SDK in both modes claims only what serve signed: a forged approval never runs."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.errors import ForgedDecision
from bot.sdk import Gate
from bot.store import audit
from bot.store.requests import RequestStore


async def test_a_forged_approval_is_refused_in_either_mode(gate: Gate, redis: Redis) -> None:
    req = await gate.submit("refund", {"order": "F1", "amount": 5})
    forger = RequestStore(redis)  # no signer: what direct mode or any script could do
    approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
    await forger.transition(req.id, approve)

    with pytest.raises(ForgedDecision, match="not approved by this bot"):
        await gate.claim(req.id)
    with pytest.raises(ForgedDecision):
        await gate.report(req.id, ok=True)  # a report claims first: refused the same way
    assert (await forger.get(req.id)).state == State.APPROVED
    reasons = [e.reason_code for e in await audit.entries(redis, req.id) if e.kind == "refused"]
    assert reasons == ["forged_decision", "forged_decision"]


async def test_a_signed_approval_runs_in_either_mode(gate: Gate, wall_store: RequestStore) -> None:
    req = await gate.submit("refund", {"order": "F2", "amount": 5})
    approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
    await wall_store.transition(req.id, approve)  # as serve records it
    assert (await gate.claim(req.id)).state == State.EXECUTING
