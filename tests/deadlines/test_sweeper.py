"""Timeouts with an injected clock: hours of escalation in milliseconds."""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import FINAL, Event, State
from bot.deadlines.sweeper import Sweeper
from bot.errors import Expired
from bot.store import audit, keys
from bot.store.requests import Moved, RequestStore
from bot.store.run.questions import QuestionStore
from tests.support.clients import open_client


def sweeper(store: RequestStore, clock: FakeClock, redis: Redis) -> Sweeper:
    return Sweeper(store, QuestionStore(redis, clock=clock), clock=clock)


async def test_escalates_through_levels_then_default(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 3}, requester="U1")).request
    sw = sweeper(store, clock, redis)
    assert (await sw.sweep_once()).fired == 0
    clock.advance(10 * 60_000)  # review timeout
    assert (await sw.sweep_once()).fired == 1
    lvl1 = await store.get(req.id)
    assert lvl1.state == State.PENDING_REVIEW and lvl1.level == 1
    assert lvl1.assignees.users == ("UONCALL",)
    assert lvl1.expires_at == clock.now + 10 * 60_000
    clock.advance(10 * 60_000)
    await sw.sweep_once()
    lvl2 = await store.get(req.id)
    assert lvl2.level == 2 and lvl2.expires_at == clock.now + 5 * 60_000  # level's own timeout
    clock.advance(5 * 60_000)
    await sw.sweep_once()
    final = await store.get(req.id)
    assert final.state == State.AUTO_REJECTED and final.expires_at is None
    trail = [(e.event, e.to_state) for e in await audit.entries(redis, req.id)]
    assert trail == [
        ("create", "pending_review"),
        ("timeout", "escalated"),
        ("reassign", "pending_review"),
        ("timeout", "escalated"),
        ("reassign", "pending_review"),
        ("timeout", "auto_rejected"),
    ]
    assert (await sw.sweep_once()).fired == 0  # nothing left to fire


async def test_decision_after_expiry_is_refused_even_before_the_sweep(
    store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 3}, requester="U1")).request
    clock.advance(10 * 60_000)
    try:
        await store.transition(
            req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        )
        raise AssertionError("must be refused")
    except Expired as exc:
        assert "auto_rejected" in str(exc)


async def test_escalated_assignee_may_approve(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 5000}, requester="U1")).request
    clock.advance(10 * 60_000)
    await sweeper(store, clock, redis).sweep_once()
    moved = await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="UONCALL", payload_hash=req.payload_hash)
    )
    assert moved.request.state == State.APPROVED


async def test_stale_timer_is_a_noop(store: RequestStore, policy: Policy, clock: FakeClock) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 3}, requester="U1")).request
    clock.advance(10 * 60_000)
    stale = await store.transition(req.id, Decision(event=Event.TIMEOUT, fence=99))
    assert stale.noop and stale.request.version == 1
    fired = await store.transition(req.id, Decision(event=Event.TIMEOUT, fence=1))
    assert not fired.noop and fired.request.level == 1
    repeat = await store.transition(req.id, Decision(event=Event.TIMEOUT, fence=1))
    assert repeat.noop and repeat.request.version == fired.request.version


async def test_two_sweepers_fire_each_of_1000_timeouts_once(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis, redis_url: str
) -> None:
    created = []
    for i in range(1000):
        created.append(
            (await store.create(policy, tool="refund", args={"n": i}, requester="U1")).request.id
        )
    clock.advance(10 * 60_000)
    clients = [await open_client(redis_url) for _ in range(2)]
    try:
        sweepers = [
            Sweeper(
                RequestStore(c, clock=clock), QuestionStore(c, clock=clock), clock=clock, batch=100
            )
            for c in clients
        ]
        stats = await asyncio.gather(*(s.sweep_once() for s in sweepers))
    finally:
        for c in clients:
            await c.aclose()
    assert sum(s.fired for s in stats) == 1000
    pipe = redis.pipeline(transaction=False)
    for rid in created:
        pipe.lrange(keys.audit(rid), 0, -1)
    for trail in await pipe.execute():
        assert sum('"event":"timeout"' in line for line in trail) == 1
    levels = {(await store.get(rid)).level for rid in created[:50]}
    assert levels == {1}


async def test_no_human_action_every_request_ends_final(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    ids = []
    for tool, args in [
        ("refund", {"amount": 1}),
        ("refund", {"amount": 5000}),
        ("deploy", {}),
        ("move_claw", {}),
        ("unknown_tool", {"x": 1}),
    ]:
        ids.append((await store.create(policy, tool=tool, args=args, requester="U1")).request.id)
    sw = sweeper(store, clock, redis)
    for _ in range(10):
        clock.advance(60 * 60_000)
        await sw.sweep_once()
    for rid in ids:
        r = await store.get(rid)
        assert r.state in FINAL and r.expires_at is None, (r.tool, r.state)
    # The approved-but-never-claimed move_claw is cancelled, never run late.
    assert (await store.get(ids[3])).state == State.CANCELLED


async def test_questions_expire(redis: Redis, clock: FakeClock, store: RequestStore) -> None:
    qs = QuestionStore(redis, clock=clock)
    q = await qs.ask("left or right?", timeout_ms=1000)
    sw = Sweeper(store, qs, clock=clock)
    clock.advance(999)
    assert (await sw.sweep_once()).fired == 0
    clock.advance(1)
    assert (await sw.sweep_once()).fired == 1
    assert (await qs.get(q.id)).state == "expired"


async def _approved(store: RequestStore, req_id: str, payload_hash: str) -> None:
    await store.transition(
        req_id, Decision(event=Event.APPROVE, actor="U2", payload_hash=payload_hash)
    )


async def test_every_request_timer_waits_for_its_deadline_to_the_millisecond(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    # A sweeper that picks a timer even 1 ms early hands Lua a timer it must refuse; the
    # sweeper then drops it as stale and the request would never time out at all.
    review = (
        await store.create(policy, tool="refund", args={"n": 1, "amount": 1}, requester="U1")
    ).request
    clock.advance(1000)  # distinct deadlines, so each is tested on its own
    claim = (
        await store.create(policy, tool="refund", args={"n": 2, "amount": 1}, requester="U1")
    ).request
    await _approved(store, claim.id, claim.payload_hash)
    clock.advance(1000)
    run = (
        await store.create(policy, tool="refund", args={"n": 3, "amount": 1}, requester="U1")
    ).request
    await _approved(store, run.id, run.payload_hash)
    await store.transition(run.id, Decision(event=Event.CLAIM, actor="worker"))
    sw = sweeper(store, clock, redis)
    armed = {rid: (await store.get(rid)) for rid in (review.id, claim.id, run.id)}
    for rid, before in sorted(armed.items(), key=lambda kv: kv[1].expires_at or 0):
        assert before.expires_at is not None
        clock.advance(before.expires_at - 1 - clock.now)
        await sw.sweep_once()
        assert (await store.get(rid)).version == before.version, f"{before.state} fired early"
        clock.advance(1)
        await sw.sweep_once()
        after = await store.get(rid)
        assert after.version > before.version, f"{before.state} never fired at its deadline"
    assert (await store.get(review.id)).level == 1
    assert (await store.get(claim.id)).state == State.CANCELLED
    assert (await store.get(run.id)).state == State.MANUAL_INTERVENTION


async def test_a_stale_timer_is_dropped_and_the_rest_of_the_batch_still_fires(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    # Stale timers exist when a request moved on between a sweeper's read and its fire.
    fired: list[str] = []

    async def on_fired(moved: Moved) -> None:
        fired.append(moved.request.id)

    ids = [
        (await store.create(policy, tool="refund", args={"n": n}, requester="U1")).request.id
        for n in range(3)
    ]
    shard = keys.shard_of(ids[0])
    stale = keys.due_member("req", ids[0], 99)
    await redis.zadd(keys.due(shard), {stale: 1})  # the earliest entry of its shard
    clock.advance(10 * 60_000)
    sw = Sweeper(store, QuestionStore(redis, clock=clock), clock=clock, on_fired=on_fired)
    stats = await sw.sweep_once()
    assert (stats.fired, stats.noops) == (3, 1)
    assert sorted(fired) == sorted(ids)
    assert await redis.zscore(keys.due(shard), stale) is None


async def test_every_due_question_fires_in_one_sweep(
    redis: Redis, clock: FakeClock, store: RequestStore
) -> None:
    qs = QuestionStore(redis, clock=clock)
    asked = [await qs.ask(f"question {n}?", timeout_ms=1000) for n in range(2)]
    clock.advance(1000)
    assert (await Sweeper(store, qs, clock=clock).sweep_once()).fired == 2
    assert {(await qs.get(q.id)).state for q in asked} == {"expired"}


async def test_the_sweepers_transitions_are_logged_one_line_each_as_the_audit_has_them(
    store: RequestStore,
    policy: Policy,
    clock: FakeClock,
    redis: Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Escalations and policy defaults are what operators alert on: each step the audit
    records is one `transition` line, with the fields every other transition logs."""
    req = (await store.create(policy, tool="refund", args={"amount": 3}, requester="U1")).request
    sw = sweeper(store, clock, redis)
    with caplog.at_level(logging.INFO, logger="bot.store"):
        for step_ms in (10 * 60_000, 10 * 60_000, 5 * 60_000):
            clock.advance(step_ms)
            await sw.sweep_once()
    logged = [
        (r.event, r.from_state, r.to_state, r.actor, r.tool)  # type: ignore[attr-defined]
        for r in caplog.records
        if r.getMessage() == "transition" and getattr(r, "request_id", None) == req.id
    ]
    trail = [(e.event, e.from_state, e.to_state) for e in await audit.entries(redis, req.id)][
        1:
    ]  # after the create, logged when it was made
    assert [(e, f, t) for e, f, t, _, _ in logged] == trail
    assert [e for e, *_ in logged] == ["timeout", "reassign", "timeout", "reassign", "timeout"]
    assert {(actor, tool) for *_, actor, tool in logged} == {("system", "refund")}
    assert logged[-1][2] == "auto_rejected"


async def test_a_question_the_sweeper_expires_is_logged_as_its_answer_would_be(
    redis: Redis, clock: FakeClock, store: RequestStore, caplog: pytest.LogCaptureFixture
) -> None:
    qs = QuestionStore(redis, clock=clock)
    answered = await qs.ask("Which one?", timeout_ms=1000, run_id="run-q")
    left = await qs.ask("And then?", timeout_ms=1000, run_id="run-q")
    with caplog.at_level(logging.INFO, logger="bot.store"):
        await qs.answer(answered.id, actor="UKID", answer="the bear")
        clock.advance(1000)
        await Sweeper(store, qs, clock=clock).sweep_once()
    logged = [
        (r.question_id, r.event, r.from_state, r.to_state, r.actor, r.run_id)  # type: ignore[attr-defined]
        for r in caplog.records
        if r.getMessage() == "question"
    ]
    assert logged == [
        (answered.id, "answer", "open", "answered", "UKID", "run-q"),
        (left.id, "timeout", "open", "expired", "system", "run-q"),
    ]
