"""An SDK free call in direct mode, outside a run or in a run known clear locally, waits
on one round trip: its create is written before the function runs and read back with
the report (bot/store/free_call.py).
What a person relies on still holds: the call is in the store while it runs, its outcome
is stored before the result comes back, a crash mid-call reaches a person, and a create
the store refused after the function ran is said loudly, never dropped."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection

from bot.config import Settings
from bot.core.policy import Policy
from bot.core.states import State
from bot.deadlines.sweeper import Sweeper
from bot.errors import NotFound
from bot.gate.corrections import correct, stop_run
from bot.sdk import Gate, RunStopped, Steered, require_approval
from bot.store import audit
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.run_signals import signals_for
from bot.store.stores import StoreSet
from tests.sdk.conftest import direct_gate
from tests.support.children import kill_9_when_written
from tests.support.keys import serve_signer
from tests.support.poll import eventually

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("HITL_TEST_CLUSTER")), reason="one Redis: a cluster waits on each create"
)


class Replies:
    """Counts the replies this process's redis-py connections read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        plain = AbstractConnection.read_response

        async def counted(conn: AbstractConnection, *a: Any, **kw: Any) -> Any:
            self.read += 1
            return await plain(conn, *a, **kw)

        monkeypatch.setattr(AbstractConnection, "read_response", counted)


async def only(store: RequestStore) -> str:
    ids = await store.ids_between()
    assert len(ids) == 1, ids
    return ids[0]


async def test_the_function_runs_before_the_create_is_read_and_the_outcome_before_it_returns(
    redis: Redis, redis_url: str, policy: Policy, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = direct_gate(redis_url, policy)
    store = RequestStore(redis)
    replies = Replies(monkeypatch)
    seen: list[tuple[int, State]] = []
    start = 0

    @require_approval(gate, tool="move_claw")
    async def move_claw(dir: str) -> str:
        if dir == "right":
            before = replies.read
            # another client sees the call in the store while it runs (its create was sent)
            rid = await eventually(lambda: newest(store, first), ignoring=(AssertionError,))
            req = await eventually(lambda: store.get(rid), ignoring=(NotFound,))
            seen.append((before - start, req.state))
        return f"moved {dir}"

    try:
        # the first call opens the store, records the schema and loads the create script
        assert await move_claw("left") == "moved left"
        first = await only(store)
        start = replies.read
        assert await move_claw("right") == "moved right"
        rid = await newest(store, first)
        assert (await store.get(rid)).state == State.COMPLETED  # stored before the return
    finally:
        await gate.aclose()
    assert seen == [(0, State.EXECUTING)]  # no reply read before the function ran
    trail = [(e.event, e.to_state, e.actor) for e in await audit.entries(redis, rid)]
    assert trail == [
        ("create", "pending_review", "agent-7"),
        ("approve", "approved", "system"),
        ("claim", "executing", "agent-7"),
        ("succeed", "completed", "agent-7"),
    ]


async def newest(store: RequestStore, first: str) -> str:
    ids = [i for i in await store.ids_between() if i != first]
    assert len(ids) == 1, ids
    return ids[0]


@pytest.mark.parametrize("mode", ["async", "sync"])
async def test_a_failing_function_is_reported_failed_and_raises(
    redis: Redis, redis_url: str, policy: Policy, mode: str
) -> None:
    gate = direct_gate(redis_url, policy)

    def boom(dir: str) -> str:
        raise RuntimeError(f"claw stuck {dir}")

    async def boom_async(dir: str) -> str:
        return boom(dir)

    try:
        if mode == "sync":
            fn = require_approval(gate, tool="move_claw")(boom)
            with pytest.raises(RuntimeError, match="claw stuck"):
                await asyncio.to_thread(fn, "left")
        else:
            with pytest.raises(RuntimeError, match="claw stuck"):
                await require_approval(gate, tool="move_claw")(boom_async)("left")
    finally:
        await gate.aclose()
    req = await RequestStore(redis).get(await only(RequestStore(redis)))
    assert req.state == State.MANUAL_INTERVENTION
    assert "claw stuck left" in (req.detail or "")


async def test_callers_cancelled_mid_call_record_the_call_and_give_the_connection_back(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    """Each cancelled call ends for a person (it may have moved the claw); its connection
    goes back to the pool, so a pool of two still serves the next call at once."""
    settings = Settings(redis_url=SecretStr(redis_url), hitl_redis_max_connections=2)
    gate = Gate(settings=settings, policy=policy, requester="agent-7")
    running = asyncio.Event()

    @require_approval(gate, tool="move_claw")
    async def move_claw(dir: str) -> str:
        if dir != "warm":
            running.set()
            await asyncio.Event().wait()
        return dir

    try:
        assert await move_claw("warm") == "warm"
        for i in range(4):
            running.clear()
            task = asyncio.ensure_future(move_claw(f"left {i}"))
            await running.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        assert await asyncio.wait_for(move_claw("warm"), 10) == "warm"
    finally:
        await gate.aclose()
    store = RequestStore(redis)
    states = sorted([(await store.get(rid)).state.value for rid in await store.ids_between()])
    assert states == ["completed"] * 2 + ["manual_intervention"] * 4


async def test_a_gate_closed_before_the_report_leaves_the_call_for_its_deadline(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    """A claimed free call nobody reports (the process is closing its gate): the create is
    read back, so the call is on record as executing, and its deadline will flag it."""
    gate = direct_gate(redis_url, policy)
    req, claimed = await gate.acquire("move_claw", {"dir": "left"}, claim=True)
    assert claimed and req.state == State.EXECUTING
    await gate.aclose()  # no unclosed-connection warning: the suite treats those as errors
    stored = await RequestStore(redis).get(req.id)
    assert stored.state == State.EXECUTING and stored.fence == req.fence


async def test_a_flushed_script_is_loaded_again_and_the_call_recorded(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    gate = direct_gate(redis_url, policy)

    @require_approval(gate, tool="move_claw")
    async def move_claw(dir: str) -> str:
        return dir

    try:
        assert await move_claw("left") == "left"
        await redis.script_flush()  # a restarted server: the next create is NOSCRIPT
        assert await move_claw("right") == "right"
    finally:
        await gate.aclose()
    store = RequestStore(redis)
    states = [(await store.get(rid)).state for rid in await store.ids_between()]
    assert states == [State.COMPLETED, State.COMPLETED]


async def test_a_create_refused_after_the_function_ran_is_said_loudly(
    redis: Redis, redis_url: str, policy: Policy, caplog: pytest.LogCaptureFixture
) -> None:
    """The trade the single round trip makes (README, Performance): the function may run
    before the store refuses its create. Its result still comes back (the side effect
    happened), and the log says at error level that the call may have no record."""
    gate = direct_gate(redis_url, policy)
    ran: list[str] = []

    @require_approval(gate, tool="move_claw")
    async def move_claw(dir: str) -> str:
        ran.append(dir)
        return dir

    try:
        assert await move_claw("left") == "left"  # opens the store
        await redis.config_set("maxmemory", "1")  # every write refused: out of memory
        try:
            with caplog.at_level(logging.ERROR, logger="bot"):
                assert await move_claw("right") == "right"
        finally:
            await redis.config_set("maxmemory", "0")
    finally:
        await gate.aclose()
    assert ran == ["left", "right"]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("did not confirm its record" in e and "maxmemory" in e for e in errors), errors


async def test_kill_9_mid_call_leaves_the_call_executing_for_its_deadline(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    """The create reached the kernel before the function ran: a process killed while the
    function runs leaves the call on record, and its deadline hands it to a person."""
    marker = tmp_path / "rid"
    await kill_9_when_written(
        marker, "tests.sdk.free_call_child", redis_url, str(marker), timeout_s=30
    )
    rid = marker.read_text()
    assert rid != "not sent"  # its create was written without waiting, not the usual path
    store = RequestStore(redis)
    req = await eventually(lambda: store.get(rid), ignoring=(NotFound,))
    assert req.state == State.EXECUTING and req.expires_at is not None
    deadline = req.expires_at
    late = RequestStore(redis, clock=lambda: deadline + 1, signer=serve_signer())  # as serve
    await Sweeper(late, QuestionStore(redis), clock=late.clock).sweep_once()
    assert (await store.get(rid)).state == State.MANUAL_INTERVENTION


RUN = "ext:claw-1"


async def followed_run(gate: Gate, ran: list[str]) -> Any:
    """A free function of run RUN, called until the run is known clear locally (the
    follower confirmed its subscription and a store read found nothing queued): its
    next call takes the one-round-trip path."""

    @require_approval(gate, tool="move_claw", run_id=RUN)
    async def move_claw(dir: str) -> str:
        ran.append(dir)
        return dir

    b = await gate.backend()
    signals = signals_for(b.rt.requests.redis)  # type: ignore[attr-defined]
    assert signals is not None

    async def one() -> bool:
        await move_claw("warm")
        return signals.clear(RUN)

    await eventually(one, lambda clear: clear, what="the run known clear")
    ran.clear()
    return move_claw, signals


async def test_a_free_call_in_a_run_known_clear_waits_on_one_round_trip(
    redis: Redis, redis_url: str, policy: Policy, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = direct_gate(redis_url, policy)
    ran: list[str] = []
    try:
        await followed_run(gate, ran)
        replies = Replies(monkeypatch)
        read_before: list[int] = []

        @require_approval(gate, tool="move_claw", run_id=RUN)
        async def count(dir: str) -> str:
            read_before.append(replies.read)
            return dir

        assert await count("left") == "left"
    finally:
        await gate.aclose()
    assert read_before == [0]  # no reply read before the function ran
    store = RequestStore(redis)
    reqs = [await store.get(rid) for rid in await store.ids_between()]
    assert {(r.state, r.run_id) for r in reqs} == {(State.COMPLETED, RUN)}


@pytest.mark.parametrize("act", ["correct", "stop"])
async def test_a_correction_or_stop_while_a_free_call_runs_stops_the_next_call(
    redis: Redis, redis_url: str, policy: Policy, act: str
) -> None:
    """The call already running finishes; the pipelined report's read of the run's queue
    and stop flag keeps the next call from taking the local path, and it never runs."""
    gate = direct_gate(redis_url, policy)
    p = StoreSet(redis)
    ran: list[str] = []
    try:
        move_claw, _ = await followed_run(gate, ran)

        @require_approval(gate, tool="move_claw", run_id=RUN)
        async def person_acts_meanwhile(dir: str) -> str:
            ran.append(dir)
            if act == "correct":
                await correct(p.steering, p.requests, p.runs, RUN, "aim left", actor="UKID")
            else:
                await stop_run(p.runs, p.requests, p.questions, p.steering, RUN, actor="UKID")
            return dir

        assert await person_acts_meanwhile("one") == "one"
        raised = (Steered, "aim left") if act == "correct" else (RunStopped, "stopped")
        with pytest.raises(raised[0], match=raised[1]):
            await move_claw("two")
    finally:
        await gate.aclose()
    assert ran == ["one"]  # the second call never ran


async def test_a_correction_queued_between_calls_reaches_the_next_one(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    """Once its signal arrived (well under a millisecond here; a person's correction
    comes through serve, in another process): the run is no longer clear locally, so
    the next call asks the store, which refuses it."""
    gate = direct_gate(redis_url, policy)
    people = StoreSet(redis)
    ran: list[str] = []
    try:
        move_claw, signals = await followed_run(gate, ran)
        await correct(people.steering, people.requests, people.runs, RUN, "wait", actor="UKID")
        await eventually(lambda: signals.clear(RUN), lambda clear: not clear)
        with pytest.raises(Steered, match="wait"):
            await move_claw("one")
    finally:
        await gate.aclose()
    assert ran == []
