"""The store files no integer past what JSON carries exactly (|n| > 2**53), whoever
calls it: the worker and the SDK's direct mode skip the API's check (issue 41)."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import PayloadError
from bot.store.requests import RequestStore
from bot.store.tools import schema_of

HUGE = -(10**400)
SCHEMA = {"type": "object", "properties": {"amount": {"type": "integer"}}}


async def test_a_call_with_one_is_refused_before_anything_is_stored(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    for args in ({"amount": HUGE}, {"amount": 5, "lines": [{"cents": 2**53 + 1}]}):
        with pytest.raises(PayloadError, match="is an integer beyond"):
            await store.create(
                policy, tool="refund", args=args, requester="worker", args_schema=SCHEMA
            )
    assert await redis.keys("hitl:*") == []  # no request, no event, no schema recorded
    assert await schema_of(redis, "worker", "refund") is None


async def test_an_edit_with_one_is_refused_and_the_call_still_waits(
    store: RequestStore, policy: Policy
) -> None:
    req = (
        await store.create(policy, tool="refund", args={"amount": 5}, requester="worker")
    ).request
    edit = Decision(
        event=Event.EDIT_AND_APPROVE,
        actor="UBOSS",
        payload_hash=req.payload_hash,
        new_args={"amount": 2**53 + 1},
    )
    with pytest.raises(PayloadError, match="argument amount is an integer beyond"):
        await store.transition(req.id, edit)
    assert (await store.get(req.id)).state == State.PENDING_REVIEW
