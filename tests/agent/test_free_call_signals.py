"""A worker's free call that waits on one round trip (bot/store/free_call.py), with the
run's corrections and stop known locally (bot/store/run/run_signals.py): what a person does
still reaches the agent, a crash mid-call still reaches a person, and a lost
subscription falls back to asking the store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from bot.agent import messages as msg
from bot.agent.gate import ToolGate, request_id
from bot.agent.llm import ToolCall
from bot.agent.loader import Agent
from bot.agent.tools import Tool, ToolRegistry, tool
from bot.core.models import Run, Steering
from bot.core.states import State
from bot.gate.corrections import stop_run
from bot.store import keys
from tests.agent.conftest import Stores
from tests.agent.test_gate import workers_gate
from tests.support.children import kill_9_when_written
from tests.support.poll import eventually

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("HITL_TEST_CLUSTER")), reason="one Redis: a cluster asks the store"
)


class Free:
    """A free tool that records each run and may act as a person while it runs."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.during: Any = None  # an async callable run inside the tool, once

    def gate(self, stores: Stores) -> ToolGate:
        """The gate as a worker builds it, with this agent's tool settings merged."""
        return workers_gate(stores, Agent.of("free", "You take notes.", list(self.tools())))

    def registry(self) -> ToolRegistry:
        return ToolRegistry(self.tools())

    def tools(self) -> list[Tool]:
        @tool(risk="low", review=False)
        async def note(text: str) -> str:
            """Write an internal note."""
            self.ran.append(text)
            if self.during is not None:
                act, self.during = self.during, None
                await act()
            return f"noted {text}"

        return [note]


async def followed(gate: ToolGate, free: Free, tools: ToolRegistry, run_id: str) -> None:
    """Free calls until the run is known clear locally: the next one takes the local path."""
    n = iter(range(1000))

    async def one() -> bool:
        await gate.check(ToolCall(f"w{next(n)}", "note", '{"text": "warm"}'), tools, run_id=run_id)
        return gate.signals is not None and gate.signals.clear(run_id)

    await eventually(one, lambda clear: clear)
    free.ran.clear()


async def followed_run(stores: Stores) -> tuple[Run, Free, ToolGate, ToolRegistry]:
    """A new run, its free tool and gate, followed until its next call takes the local
    path."""
    run = await stores.start()
    free = Free()
    gate = free.gate(stores)
    tools = free.registry()
    await followed(gate, free, tools, run.id)
    return run, free, gate, tools


async def test_a_correction_queued_while_a_free_call_runs_comes_at_the_next_call(
    stores: Stores,
) -> None:
    run, free, gate, tools = await followed_run(stores)

    async def person() -> None:
        await stores.steering.push(run.id, "use the other account", actor="UBOSS")

    free.during = person
    first = await gate.check(ToolCall("c1", "note", '{"text": "one"}'), tools, run_id=run.id)
    assert first.status == "completed"  # it was already running: it finishes
    second = await gate.check(ToolCall("c2", "note", '{"text": "two"}'), tools, run_id=run.id)
    assert (second.status, second.text) == (
        "steered",
        msg.STEERED.format(text="use the other account"),
    )
    assert free.ran == ["one"]  # the second call never ran
    assert (await stores.requests.get(request_id(run.id, "c1"))).state == State.COMPLETED


async def test_a_correction_queued_between_calls_reaches_the_next_one(stores: Stores) -> None:
    run, free, gate, tools = await followed_run(stores)
    await stores.steering.push(run.id, "wait for me", actor="UBOSS")
    assert gate.signals is not None
    await eventually(lambda: gate.signals.clear(run.id) if gate.signals else False, lambda c: not c)
    out = await gate.check(ToolCall("c1", "note", '{"text": "one"}'), tools, run_id=run.id)
    assert (out.status, out.text) == ("steered", msg.STEERED.format(text="wait for me"))
    assert free.ran == []


async def test_a_stop_asked_while_a_free_call_runs_is_seen_at_the_next_call(
    stores: Stores,
) -> None:
    run, free, gate, tools = await followed_run(stores)

    async def person() -> None:
        await stop_run(
            stores.runs, stores.requests, stores.questions, stores.steering, run.id, actor="UBOSS"
        )

    free.during = person
    await gate.check(ToolCall("c1", "note", '{"text": "one"}'), tools, run_id=run.id)
    out = await gate.check(ToolCall("c2", "note", '{"text": "two"}'), tools, run_id=run.id)
    assert out.status == "stopped" and out.stop
    assert free.ran == ["one"]


async def test_a_lost_subscription_falls_back_to_the_store(stores: Stores) -> None:
    """A correction whose signal went nowhere (queued while the follower's link was
    down) is still the next call's: after a reconnect nothing local is trusted until
    the store has been read."""
    run, free, gate, tools = await followed_run(stores)
    await stores.redis.client_kill_filter(_type="pubsub")
    await eventually(lambda: gate.signals.clear(run.id) if gate.signals else False, lambda c: not c)
    # queued with no signal at all, as if it was published while nobody listened
    s = Steering(id="s-lost", run_id=run.id, text="lost signal", actor="UBOSS", at=1)
    await stores.redis.rpush(keys.steering(run.id), s.model_dump_json())
    out = await gate.check(ToolCall("c1", "note", '{"text": "one"}'), tools, run_id=run.id)
    assert (out.status, out.text) == ("steered", msg.STEERED.format(text="lost signal"))
    assert free.ran == []
    # and once the store was read again, the local path comes back
    await followed(gate, free, tools, run.id)


async def test_kill_9_mid_free_call_still_reaches_a_person(
    stores: Stores, redis_url: str, tmp_path: Path
) -> None:
    """The create is written before the tool starts: a worker killed mid-call leaves the
    call in the store as executing, and whoever resumes the run hands it to a person."""
    run = await stores.start()
    marker = tmp_path / "running"
    child = "tests.agent.free_call_child"
    await kill_9_when_written(marker, child, redis_url, run.id, str(marker), timeout_s=20)
    call_id = f"c{marker.read_text()}"
    rid = request_id(run.id, call_id)
    req = await eventually(lambda: stores.requests.get(rid), lambda r: r is not None)
    assert req.state == State.EXECUTING
    free = Free()
    gate = free.gate(stores)
    out = await gate.check(
        ToolCall(call_id, "note", '{"text": "again"}'), free.registry(), run_id=run.id, resumed=True
    )
    assert out.status == "manual_intervention"
    assert (await stores.requests.get(rid)).state == State.MANUAL_INTERVENTION
    assert free.ran == []  # never run twice


async def test_a_repeated_call_id_is_not_run_twice(stores: Stores) -> None:
    """A model that repeats a tool-call id names the same call: the store's record of it
    answers, the tool does not run again."""
    run, free, gate, tools = await followed_run(stores)
    for _ in range(2):
        await gate.check(ToolCall("c1", "note", '{"text": "one"}'), tools, run_id=run.id)
    assert free.ran == ["one"]
    assert (await stores.requests.get(request_id(run.id, "c1"))).state == State.COMPLETED
