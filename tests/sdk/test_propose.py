"""`gate.propose(tool, candidates)` in both modes: it returns the approved request whose
args are the candidate a person chose, and claiming it hands out that call only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.core.candidates import proposal_hash
from bot.core.models import Decision
from bot.core.states import Event, State
from bot.errors import PayloadError
from bot.sdk import Gate
from bot.store.requests import RequestStore
from tests.support.poll import eventually

CANDS: list[dict[str, Any]] = [{"order": "A1", "amount": 40}, {"order": "A2", "amount": 19}]


async def test_propose_returns_the_chosen_candidate(gate: Gate, wall_store: RequestStore) -> None:
    proposing = asyncio.create_task(gate.propose("refund", CANDS, timeout=20))

    async def pending() -> Any:
        reqs = await wall_store.list_pending()
        return reqs[0] if reqs else None

    req = await eventually(pending, what="the proposal in review")
    assert req.candidates == tuple(CANDS) and req.args == {}
    choose = Decision(
        event=Event.EDIT_AND_APPROVE,
        actor="UALICE",
        payload_hash=proposal_hash("refund", CANDS),
        new_args=CANDS[1],
    )
    await wall_store.transition(req.id, choose)
    got = await asyncio.wait_for(proposing, 15)
    assert got.state == State.APPROVED and got.args == CANDS[1]
    claimed = await gate.claim(got.id)
    assert claimed.args == CANDS[1] and claimed.state == State.EXECUTING


@pytest.mark.parametrize(
    "cands", [[CANDS[0]], [{"n": i} for i in range(6)], [CANDS[0], dict(CANDS[0])]]
)
async def test_bad_candidates_are_refused_before_filing(
    gate: Gate, wall_store: RequestStore, cands: list[dict[str, Any]]
) -> None:
    with pytest.raises(PayloadError, match="candidate"):
        await gate.propose("refund", cands, timeout=5)
    assert await wall_store.list_pending() == []
