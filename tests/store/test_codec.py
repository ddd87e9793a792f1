"""Replies are decoded without pydantic's validation: the result must equal the validated model."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store.codec import from_hash
from bot.store.requests import RequestStore


async def test_decoded_request_equals_the_validated_one(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 5000}, requester="U1")).request
    d = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
    await store.transition(req.id, d)
    cancel = Decision(event=Event.CANCEL, reason_code="run_stopped", text="stopped")
    for step in (None, cancel):
        if step is not None:
            await store.transition(req.id, step)
        fast = from_hash(await store.fields(req.id))
        slow = ActionRequest.model_validate(fast.model_dump())
        assert fast == slow and fast.model_dump() == slow.model_dump()
        assert fast.levels and fast.approvals and type(fast.approvals[0].at) is int
        assert type(fast.state) is type(slow.state) and type(fast.risk) is type(slow.risk)
        assert type(fast.levels[0].channels) is tuple and type(fast.approvers) is tuple
    assert fast.resolution is not None and fast.resolution.event is Event.APPROVE


async def test_owner_is_stored_only_where_it_is_not_the_requester(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    mine = await store.create(policy, tool="refund", args={"amount": 5}, requester="agent-a")
    assert mine.request.owner == "agent-a"
    h = await store.fields(mine.request.id)
    assert "owner" not in h and from_hash(h).owner == "agent-a"  # no byte spent on it
    filed = await store.create(
        policy, tool="refund", args={"amount": 5}, requester="agent:claw", owner="worker"
    )
    assert (await store.get(filed.request.id)).owner == "worker"
    assert (await store.fields(filed.request.id))["owner"] == "worker"
