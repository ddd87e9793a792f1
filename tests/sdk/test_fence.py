"""The SDK, in both modes, fenced: `require_approval` hands a function that declares
`fence` its claim's fence (never reviewed), reports with it, and `Gate.claim` sends a
claim the store did not confirm again with the same token, getting the same claim."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.core.models import ActionRequest, Decision
from bot.core.proof import fence as fence_module
from bot.core.states import Event, State
from bot.errors import NotReplicated
from bot.sdk import Gate, require_approval
from bot.store import audit
from bot.store.requests import RequestStore
from tests.sdk.conftest import Reviewer


def approve(req: ActionRequest) -> Decision:
    return Decision(event=Event.APPROVE, actor="UREV", payload_hash=req.payload_hash)


@pytest.mark.parametrize("flavor", ["async", "sync"])
async def test_a_function_that_declares_fence_gets_its_claims(
    gate: Gate, flavor: str, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    seen: list[dict[str, Any]] = []
    undone: list[dict[str, Any]] = []

    def body(order: str, amount: int, fence: str | None) -> str:
        seen.append({"order": order, "amount": amount, "fence": fence})
        if amount > 100:
            raise RuntimeError("bank said no")
        return f"refunded {amount}"

    def undo(order: str, amount: int = 40, *, fence: str | None = None) -> None:
        undone.append({"order": order, "fence": fence})

    if flavor == "async":

        async def refund_async(order: str, amount: int = 40, *, fence: str | None = None) -> str:
            return body(order, amount, fence)

        refund: Any = require_approval(gate, tool="refund", compensate=undo)(refund_async)
    else:

        def refund_sync(order: str, amount: int = 40, fence: str | None = None) -> str:
            return body(order, amount, fence)

        sync = require_approval(gate, tool="refund", compensate=undo)(refund_sync)

        async def refund(*a: Any, **kw: Any) -> str:
            return await asyncio.to_thread(sync, *a, **kw)

    reviewer.decide(approve)
    assert await refund("A1") == "refunded 40"
    reviewer.decide(approve)
    with pytest.raises(RuntimeError):
        await refund("A2", 500)
    await reviewer.ajoin()
    first, second = [await wall_store.get(r.id) for r in reviewer.seen]
    assert [r.args for r in reviewer.seen] == [
        {"order": "A1", "amount": 40},  # the fence is the gate's, never the reviewer's
        {"order": "A2", "amount": 500},
    ]
    assert first.state == State.COMPLETED and second.state == State.ROLLED_BACK
    assert first.fence and second.fence and first.fence != second.fence
    assert [s["fence"] for s in seen] == [first.fence, second.fence]
    assert undone == [{"order": "A2", "fence": second.fence}]


async def test_a_function_without_fence_is_called_as_before(gate: Gate, reviewer: Reviewer) -> None:
    @require_approval(gate, tool="refund")
    async def refund(order: str, amount: int = 40) -> str:
        return f"refunded {amount} on {order}"

    reviewer.decide(approve)
    assert await refund("A1") == "refunded 40 on A1"
    await reviewer.ajoin()


async def test_a_claim_not_confirmed_is_sent_again_with_the_same_token(
    gate: Gate, wall_store: RequestStore, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await gate.submit("refund", {"order": "A1", "amount": 40})
    await wall_store.transition(made.id, approve(made))
    backend = await gate.backend()
    real = backend.claim
    tokens: list[str | None] = []

    async def unconfirmed_once(rid: str, *, token: str | None = None) -> ActionRequest:
        tokens.append(token)
        got = await real(rid, token=token)  # applied on the primary...
        if len(tokens) == 1:
            raise NotReplicated("not yet on the replicas")  # ...but not confirmed
        return got

    monkeypatch.setattr(backend, "claim", unconfirmed_once)
    monkeypatch.setattr(fence_module, "CLAIM_RETRY_S", 0.0)
    got = await gate.claim(made.id)
    assert len(tokens) == 2 and tokens[0] is not None and tokens[0] == tokens[1]
    assert got.state == State.EXECUTING and got.fence == f"{got.version}.{tokens[0]}"
    claims = [e for e in await audit.entries(redis, made.id) if e.event == "claim"]
    assert [e.fence for e in claims] == [got.fence]  # claimed once
    done = await gate.report(made.id, ok=True, detail="refunded", fence=got.fence)
    assert done.state == State.COMPLETED


async def test_a_claim_never_confirmed_raises(
    gate: Gate, wall_store: RequestStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await gate.submit("refund", {"order": "A1", "amount": 40})
    await wall_store.transition(made.id, approve(made))
    backend = await gate.backend()

    async def never(rid: str, *, token: str | None = None) -> ActionRequest:
        raise NotReplicated("not yet on the replicas")

    monkeypatch.setattr(backend, "claim", never)
    monkeypatch.setattr(fence_module, "CLAIM_RETRY_S", 0.0)
    with pytest.raises(NotReplicated):
        await gate.claim(made.id)
