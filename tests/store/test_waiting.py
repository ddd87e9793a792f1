"""Waiting is push-based: the waiter blocks on the server and wakes on the decision.

No latency bounds here (bench/ measures those): the waits below use deadlines far
longer than the test, so returning at all proves a push woke the waiter.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import cast

import pytest
from redis.asyncio import Redis, RedisCluster

from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db import hub
from bot.db.hub import close_hub, hub_for
from bot.errors import AlreadyResolved, StoreUnavailable
from bot.store import keys
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from tests.support.clients import CLUSTER, open_client
from tests.support.poll import eventually

LONGER_THAN_ANY_TEST = 3600.0


async def held(client: Redis, count: int = 1) -> None:
    """Until the client's wait hub holds `count` waiters, its shard reader blocked in XREAD."""

    async def holds() -> bool:
        return hub_for(client).waiting >= count and await _reader_blocked(client)

    await eventually(holds, what=f"{count} waiters, the reader blocked", timeout_s=30)


@pytest.fixture
async def waiter_client(redis_url: str) -> AsyncIterator[Redis]:
    """A client of its own for the waiter, its wait hub closed after the test, so no
    reader is left blocking into the next test (a command count there saw its XREAD)."""
    client = await open_client(redis_url)
    try:
        yield client
    finally:
        await close_hub(client)
        await client.aclose()


async def _reader_blocked(redis: Redis) -> bool:
    return any(
        c.get("cmd") == "xread" and "b" in c.get("flags", "") for c in await redis.client_list()
    )


async def test_waiter_wakes_on_decision(
    store: RequestStore, policy: Policy, waiter_client: Redis
) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    waiter = RequestStore(waiter_client)
    task = asyncio.create_task(waiter.wait(req.id, timeout_s=LONGER_THAN_ANY_TEST))
    await held(waiter_client)
    assert not task.done()
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    got = await task
    assert got.state == State.APPROVED


async def test_wait_after_decision_returns_without_waiting(
    store: RequestStore, policy: Policy
) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    # A wait that blocked would block for the hour it asks for: five seconds say it did not.
    got = await asyncio.wait_for(store.wait(req.id, timeout_s=LONGER_THAN_ANY_TEST), 5)
    assert got.state == State.APPROVED


class DecidedAfterEachRead(RequestStore):
    """A waiter's store whose every read is followed at once by a person's decision
    (through `decider`): the decision lands after the waiter read the request and
    before it blocks, where a wake written to no stream would be lost."""

    def __init__(self, redis: Redis, decider: RequestStore) -> None:
        super().__init__(redis)
        self.decider = decider

    async def get(self, rid: str) -> ActionRequest:
        req = await super().get(rid)
        if req.state == State.PENDING_REVIEW:
            approve = Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
            await self.decider.transition(rid, approve)
        return req


async def test_a_decision_between_the_waiters_read_and_its_block_still_wakes_it(
    store: RequestStore, policy: Policy, waiter_client: Redis
) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    waiter = DecidedAfterEachRead(waiter_client, store)
    # Blocked, it would block for the hour it asks for: ten seconds say it did not.
    async with asyncio.timeout(10):
        got = await waiter.wait(req.id, timeout_s=LONGER_THAN_ANY_TEST)
    assert got.state == State.APPROVED


async def test_only_a_request_someone_waited_on_keeps_a_wake_stream(
    store: RequestStore, policy: Policy, redis: Redis, waiter_client: Redis
) -> None:
    """Nobody waits on most requests: deciding one leaves no stream behind. One waited on
    has its stream, which expires, and a second wait on it (its stream made and moved
    already) still returns."""
    made = [
        (
            await store.create(policy, tool="refund", args={"a": n, "amount": 1}, requester="U1")
        ).request
        for n in range(2)
    ]
    alone, watched = made
    waiting = asyncio.create_task(
        RequestStore(waiter_client).wait(watched.id, LONGER_THAN_ANY_TEST)
    )
    await held(waiter_client)
    for req in made:
        approve = Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        await store.transition(req.id, approve)
    async with asyncio.timeout(10):
        assert (await waiting).state == State.APPROVED
        again = await RequestStore(waiter_client).wait(watched.id, LONGER_THAN_ANY_TEST)
    assert again.state == State.APPROVED
    assert await redis.exists(keys.wake(alone.id)) == 0
    assert await redis.ttl(keys.wake(watched.id)) > 0


async def test_wait_deadline_returns_still_pending(
    store: RequestStore, policy: Policy, waiter_client: Redis
) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    task = asyncio.create_task(RequestStore(waiter_client).wait(req.id, timeout_s=0.3))
    await held(waiter_client)  # it did wait, rather than return at once
    got = await task
    assert got.state == State.PENDING_REVIEW


async def test_question_first_answer_wins(questions: QuestionStore, waiter_client: Redis) -> None:
    q = await questions.ask("Which prize?", timeout_ms=60_000, run_id="run1")
    waiter = QuestionStore(waiter_client)
    waiting = asyncio.create_task(waiter.wait(q.id, timeout_s=LONGER_THAN_ANY_TEST))
    await held(waiter_client)
    first = await questions.answer(q.id, actor="UKID", answer="the penguin")
    assert first.answer == "the penguin" and first.answered_by == "UKID"
    again = await questions.answer(q.id, actor="UKID", answer="the penguin")
    assert again.version == first.version
    with pytest.raises(AlreadyResolved, match="UKID"):
        await questions.answer(q.id, actor="UDAD", answer="the bear")
    got = await waiting
    assert got.answer == "the penguin"


async def test_a_wait_on_a_cluster_client_closed_under_it_fails_and_reconnects_nothing(
    store: RequestStore, policy: Policy, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster client closed while a wait is held (its owner forgot close_hub) still
    answers, as redis-py reconnects on next use: a reader that reconnected through it
    would refresh the topology on connections nobody closes, and wait on. It fails the
    wait instead, as close_hub would. (A plain client's reader owns its connection.)"""
    if not CLUSTER:
        pytest.skip("a cluster client only: a plain client's reader owns its connection")
    # Every block ends in a read timeout, so the reader goes back to reconnect.
    monkeypatch.setattr(hub, "BLOCK_MS", 3_600_000)
    monkeypatch.setattr(hub, "READ_TIMEOUT_S", 0.5)
    made = await store.create(policy, tool="refund", args={"n": 1}, requester="U1")
    client = await open_client(redis_url)
    waiting = asyncio.create_task(RequestStore(client).wait(made.request.id, LONGER_THAN_ANY_TEST))
    await eventually(lambda: hub_for(client).waiting == 1, what="the waiter held", timeout_s=30)
    await client.aclose()
    with pytest.raises(StoreUnavailable, match="closed its Redis connection"):
        async with asyncio.timeout(30):
            await waiting
    nodes = cast(RedisCluster, client).nodes_manager
    opened = [
        n.name
        for n in [*nodes.startup_nodes.values(), *nodes.nodes_cache.values()]
        if any(c.is_connected for c in n._connections)
    ]
    assert opened == []
