"""Executors racing for signed approvals, each on its own connection: one claim wins per
request, every other is told it was already claimed, and `forged_decision` (which pages
an operator) is raised and logged only for an approval serve did not sign."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.proof.seal import FORGED
from bot.core.states import Event, State
from bot.errors import AlreadyResolved, ForgedDecision
from bot.gate.claims import ClaimCheck, claim_checked
from bot.signing import Signer
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.clients import open_client
from tests.support.keys import serve_signer

REQUESTS, EXECUTORS = 12, 8  # claims racing per request, all requests at once
ROUNDS = 5
APPROVERS = [f"U{i:02d}" for i in range(20)]
Act = Callable[[RequestStore], Awaitable[object]]  # one executor's or approver's step


def check(policy: Policy) -> ClaimCheck:
    return ClaimCheck(serve_signer().public(), policy)


def forged_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Every log line that names a forgery: the executor's ERROR and the store's refusal."""
    return [
        f"{r.levelname} {r.getMessage()} {getattr(r, 'why', '')}"
        for r in caplog.records
        if r.getMessage() == FORGED or getattr(r, "reason", None) == FORGED
    ]


async def _apart(
    redis_url: str,
    clock: FakeClock,
    signer: Signer | None,
    tasks: list[tuple[str, Act]],
) -> list[str]:
    """Each task run at once on a connection of its own; what each one came to."""

    async def one(rid: str, act: Act) -> str:
        client = await open_client(redis_url, single_connection_client=True)
        try:
            got = await act(RequestStore(client, clock=clock, signer=signer))
            return f"{rid} won" if isinstance(got, ActionRequest) else f"{rid} {got}"
        except AlreadyResolved:
            return f"{rid} already_resolved"
        except ForgedDecision:
            return f"{rid} forged"
        finally:
            await client.aclose()

    return await asyncio.gather(*(one(rid, act) for rid, act in tasks))


def _claims(rids: list[str], policy: Policy) -> list[tuple[str, Act]]:
    def claim(rid: str, n: int) -> Act:
        return lambda s: claim_checked(s, rid, actor=f"exec{n}", check=check(policy))

    return [(rid, claim(rid, n)) for n in range(EXECUTORS) for rid in rids]


async def _approved(store: RequestStore, policy: Policy, n: int) -> list[str]:
    rids = []
    for i in range(n):
        made = await store.create(policy, tool="refund", args={"amount": i}, requester="agent")
        req = made.request
        approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
        assert (await store.transition(req.id, approve)).request.state == State.APPROVED
        rids.append(req.id)
    return rids


async def test_claims_that_lose_a_race_are_told_already_claimed_never_forged(
    signed_store: RequestStore,
    policy: Policy,
    redis: Redis,
    redis_url: str,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rids = await _approved(signed_store, policy, REQUESTS * ROUNDS)
    said = []
    with caplog.at_level(logging.INFO, logger="bot.store"):
        for r in range(ROUNDS):  # the race's window is narrow: many tries, staggered apart
            batch = rids[r * REQUESTS : (r + 1) * REQUESTS]
            said += await _apart(redis_url, clock, None, _claims(batch, policy))
    tally = Counter(line.split(" ", 1)[1] for line in said)
    assert tally == {"won": len(rids), "already_resolved": len(rids) * (EXECUTORS - 1)}, tally
    assert forged_lines(caplog) == []
    for rid in rids:
        entries = await audit.entries(redis, rid)
        assert [e.reason_code for e in entries if e.kind == "refused"] == []
        assert [e.event for e in entries if e.kind == "transition"] == [
            "create",
            "approve",
            "claim",
        ]
        assert (await signed_store.get(rid)).state == State.EXECUTING


async def test_an_unsigned_approval_is_still_called_forged_by_every_racing_claim(
    store: RequestStore,
    policy: Policy,
    redis: Redis,
    redis_url: str,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rids = await _approved(store, policy, 2)  # the store's own API, without serve's key
    with caplog.at_level(logging.INFO, logger="bot.store"):
        said = await _apart(redis_url, clock, None, _claims(rids, policy))
    assert Counter(line.split(" ", 1)[1] for line in said) == {"forged": 2 * EXECUTORS}
    errors = [line for line in forged_lines(caplog) if line.startswith("ERROR")]
    assert len(errors) == 2 * EXECUTORS and all("not signed" in line for line in errors)
    for rid in rids:
        refused = [e.reason_code for e in await audit.entries(redis, rid) if e.kind == "refused"]
        assert refused == [FORGED] * EXECUTORS
        assert (await store.get(rid)).state == State.APPROVED  # never executing


async def test_twenty_approvers_at_once_on_quorum_requests_leave_each_claimable_once(
    signed_store: RequestStore,
    policy: Policy,
    redis: Redis,
    redis_url: str,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two approvals each (`deploy` is critical), sealed by serve while the others land:
    every seal must name the version its approval really made."""
    rids = []
    for i in range(10):
        made = await signed_store.create(policy, tool="deploy", args={"v": i}, requester="a")
        rids.append(made.request.id)
    hashes = {rid: (await signed_store.get(rid)).payload_hash for rid in rids}

    def approve(rid: str, who: str) -> Act:
        d = Decision(event=Event.APPROVE, actor=who, payload_hash=hashes[rid])
        return lambda s: _state_after(s, rid, d)

    votes = [(rid, approve(rid, who)) for who in APPROVERS for rid in rids]
    said = Counter(
        line.split(" ", 1)[1] for line in await _apart(redis_url, clock, serve_signer(), votes)
    )
    assert said["approved"] == 10 and said["pending_review"] == 10, said
    for rid in rids:
        final = await signed_store.get(rid)
        assert final.state == State.APPROVED and len(final.approvals) == 2, final
    with caplog.at_level(logging.INFO, logger="bot.store"):
        claimed = await _apart(redis_url, clock, None, _claims(rids, policy))
    tally = Counter(line.split(" ", 1)[1] for line in claimed)
    assert tally == {"won": 10, "already_resolved": 10 * (EXECUTORS - 1)}, tally
    assert forged_lines(caplog) == []
    for rid in rids:
        moves = [e for e in await audit.entries(redis, rid) if e.kind == "transition"]
        assert [(e.event, e.to_state) for e in moves] == [
            ("create", "pending_review"),
            ("approve", "pending_review"),
            ("approve", "approved"),
            ("claim", "executing"),
        ]


async def _state_after(store: RequestStore, rid: str, d: Decision) -> str:
    moved = await store.transition(rid, d)
    return "repeat" if moved.repeat else moved.request.state.value
