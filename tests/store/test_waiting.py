"""Waiting is push-based: the waiter wakes on the decision, not on a poll tick."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.store.questions import QuestionStore
from bot.store.requests import RequestStore


async def test_waiter_wakes_on_decision(
    store: RequestStore, policy: Policy, redis_url: str
) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    waiter_client = Redis.from_url(redis_url, decode_responses=True)
    waiter = RequestStore(waiter_client)
    try:
        task = asyncio.create_task(waiter.wait(req.id, timeout_s=10))
        await asyncio.sleep(0.2)
        assert not task.done()
        t0 = time.monotonic()
        await store.transition(
            req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        )
        got = await asyncio.wait_for(task, 2)
        assert got.state == State.APPROVED
        assert time.monotonic() - t0 < 0.5
    finally:
        await waiter_client.aclose()


async def test_wait_after_decision_returns_at_once(store: RequestStore, policy: Policy) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    t0 = time.monotonic()
    got = await store.wait(req.id, timeout_s=5)
    assert got.state == State.APPROVED and time.monotonic() - t0 < 0.2


async def test_wait_deadline_returns_still_pending(store: RequestStore, policy: Policy) -> None:
    req = (
        await store.create(policy, tool="refund", args={"a": 1, "amount": 1}, requester="U1")
    ).request
    t0 = time.monotonic()
    got = await store.wait(req.id, timeout_s=0.3)
    assert got.state == State.PENDING_REVIEW
    assert 0.25 < time.monotonic() - t0 < 1.5


async def test_question_first_answer_wins(questions: QuestionStore) -> None:
    q = await questions.ask("Which prize?", timeout_ms=60_000, run_id="run1")
    waiting = asyncio.create_task(questions.wait(q.id, timeout_s=5))
    await asyncio.sleep(0.05)
    first = await questions.answer(q.id, actor="UKID", answer="the penguin")
    assert first.answer == "the penguin" and first.answered_by == "UKID"
    again = await questions.answer(q.id, actor="UKID", answer="the penguin")
    assert again.version == first.version
    try:
        await questions.answer(q.id, actor="UDAD", answer="the bear")
        raise AssertionError("a second answer must be refused")
    except Exception as exc:
        assert "UKID" in str(exc)
    got = await asyncio.wait_for(waiting, 2)
    assert got.answer == "the penguin"
