"""Workers sharing the run queue: claims, take-overs, graceful shutdown and kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from bot.agent.llm import ChatClient
from bot.agent.loader import Agent, AgentCatalog
from bot.agent.loop import LoopConfig
from bot.agent.tools import tool
from bot.agent.worker import GROUP, Worker, WorkerConfig
from bot.core.models import RunState
from bot.core.states import State
from bot.sandbox.model import ScriptedModel, after_tool, call, say
from bot.store import keys
from tests.agent.conftest import ModelFactory, Stores
from tests.agent.fixtures import COUNT_FILE_ENV
from tests.support.keys import serve_signer
from tests.support.poll import eventually

ROOT = Path(__file__).resolve().parents[2]
COUNTING = "tests.agent.fixtures:counting_agent"
IDLE_MS = 1000


def charging(effects: list[str]) -> Agent:
    @tool(risk="medium")
    def charge(amount: int, idempotency_key: str) -> str:
        """Charge the customer."""
        effects.append(idempotency_key)
        return f"charged {amount}"

    return Agent.of("charging", "You charge customers.", [charge])


WorkerFactory = Callable[..., Awaitable[tuple[Worker, asyncio.Event]]]


@pytest.fixture
async def workers(stores: Stores) -> AsyncIterator[WorkerFactory]:
    """Start in-process workers; every one still running is stopped after the test."""
    running: list[tuple[asyncio.Event, asyncio.Task[None], ChatClient]] = []

    async def start(
        model: ScriptedModel, agent: Agent, consumer: str, **config: Any
    ) -> tuple[Worker, asyncio.Event]:
        llm = ChatClient(model.base_url, "scripted", backoff_s=0.01)
        w = Worker(
            stores,
            llm=llm,
            agents=AgentCatalog(known={agent.name: agent}),
            config=WorkerConfig(consumer=consumer, block_ms=50, **config),
            loop_config=LoopConfig(),
        )
        stop = asyncio.Event()
        running.append((stop, asyncio.create_task(w.run(stop)), llm))
        return w, stop

    yield start
    for stop, task, llm in running:
        stop.set()
        await asyncio.wait_for(task, 10)
        await llm.aclose()


async def owner(stores: Stores, entry_id: str | None = None) -> str | None:
    rows = await stores.redis.xpending_range(keys.RUN_QUEUE, GROUP, "-", "+", 10)
    rows = [r for r in rows if entry_id is None or r["message_id"] == entry_id]
    return cast(str, rows[0]["consumer"]) if rows else None


async def test_a_worker_drives_a_queued_run_and_acks_it(
    stores: Stores, scripted: ModelFactory, workers: WorkerFactory
) -> None:
    effects: list[str] = []
    model = await scripted([call("charge", amount=2), say("ok", expect=after_tool("Approved"))])
    await workers(model, charging(effects), "A")
    run = await stores.start(agent="charging")
    rid = await stores.waiting_on(run.id)
    assert await owner(stores) == "A"
    await stores.decide(rid)
    done = await eventually(lambda: stores.runs.get(run.id), lambda r: r.state in RUN_DONE)
    assert done.state == RunState.FINISHED and effects == [rid]
    await eventually(lambda: owner(stores), lambda o: o is None)  # acked
    assert await stores.redis.xlen(keys.RUN_QUEUE) == 0  # and deleted


RUN_DONE = {RunState.FINISHED, RunState.FAILED, RunState.STOPPED, RunState.TURN_LIMIT}


async def test_an_unknown_agent_fails_the_run(
    stores: Stores, scripted: ModelFactory, workers: WorkerFactory
) -> None:
    model = await scripted([])
    await workers(model, charging([]), "A")
    run = await stores.start(agent="os:system")
    done = await eventually(lambda: stores.runs.get(run.id), lambda r: r.state in RUN_DONE)
    assert done.state == RunState.FAILED and "not among this worker's agents" in (done.error or "")
    assert model.requests == []


async def test_a_live_worker_keeps_its_run_however_long_it_waits(
    stores: Stores, scripted: ModelFactory, workers: WorkerFactory
) -> None:
    effects: list[str] = []
    model = await scripted([call("charge", amount=2), say("ok", expect=after_tool("Approved"))])
    agent = charging(effects)
    # A beats twenty times per idle limit, so only a stall of a whole second could look dead.
    await workers(model, agent, "A", min_idle_ms=IDLE_MS, heartbeat_ms=50)
    run = await stores.start(agent="charging")
    rid = await stores.waiting_on(run.id)
    b, _ = await workers(model, agent, "B", min_idle_ms=IDLE_MS, heartbeat_ms=50)
    scans = 0
    reclaim = b._reclaim

    async def counted(count: int) -> list[tuple[str, str]]:
        nonlocal scans
        scans += 1
        return await reclaim(count)

    b._reclaim = counted  # type: ignore[method-assign]
    ((entry_id, _),) = await stores.redis.xrange(keys.RUN_QUEUE)
    born_ms = int(entry_id.split("-")[0])

    async def age_ms() -> int:
        sec, usec = await stores.redis.time()
        return sec * 1000 + usec // 1000 - born_ms

    async def scanned() -> int:
        return scans

    # The run outlives the idle limit twice over, and B looks for dead claims after that.
    await eventually(age_ms, lambda age: age > 2 * IDLE_MS, timeout_s=30)
    seen = scans
    await eventually(scanned, lambda n: n >= seen + 3, timeout_s=30)
    assert await owner(stores) == "A"
    await stores.decide(rid)
    await eventually(lambda: stores.runs.get(run.id), lambda r: r.state in RUN_DONE)
    assert effects == [rid] and len(model.requests) == 2


async def test_sigterm_hands_waiting_runs_over_at_once(
    stores: Stores, scripted: ModelFactory, workers: WorkerFactory
) -> None:
    effects: list[str] = []
    model = await scripted([call("charge", amount=2), say("ok", expect=after_tool("Approved"))])
    agent = charging(effects)
    _, stop_a = await workers(model, agent, "A")  # the default idle limit (10 s)
    run = await stores.start(agent="charging")
    rid = await stores.waiting_on(run.id)
    stop_a.set()
    # Not acked (the run is not over) but marked idle, so the next worker takes it now.
    pending = lambda: stores.redis.xpending_range(keys.RUN_QUEUE, GROUP, "-", "+", 1)  # noqa: E731
    limit = WorkerConfig().min_idle_ms
    (row,) = await eventually(pending, lambda rows: rows[0]["time_since_delivered"] >= limit)
    assert row["consumer"] == "A"
    await workers(model, agent, "B")
    await eventually(lambda: owner(stores), lambda o: o == "B", timeout_s=3)
    await stores.decide(rid)
    done = await eventually(lambda: stores.runs.get(run.id), lambda r: r.state in RUN_DONE)
    assert done.state == RunState.FINISHED and effects == [rid] and len(model.requests) == 2


async def _spawn(
    consumer: str, env: dict[str, str], log: Path, *flags: str
) -> asyncio.subprocess.Process:
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.agent.worker",
            "--agent",
            COUNTING,
            *flags,
            "--consumer",
            consumer,
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=out,
        )


async def test_kill_9_while_waiting_then_another_worker_finishes_it_once(
    stores: Stores, scripted: ModelFactory, redis_url: str, tmp_path: Path
) -> None:
    model = await scripted([call("charge", amount=42), say("ok", expect=after_tool("Approved"))])
    count = tmp_path / "side-effects"
    count.touch()
    log = tmp_path / "workers.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HITL_", "OPENAI_"))}
    env |= {
        "REDIS_URL": redis_url,
        "HITL_SIGNING_PUBLIC_KEY": serve_signer().public_b64(),  # as a worker beside serve
        "OPENAI_BASE_URL": model.base_url,
        "HITL_MODEL": "scripted",
        COUNT_FILE_ENV: str(count),
        "PYTHONPATH": str(ROOT),
    }
    run = await stores.runs.start(agent=COUNTING, prompt="charge 42", requester="UASKER")
    first = await _spawn("w1", env, log, "--min-idle", "1s")
    second = None
    try:
        rid = await stores.waiting_on(run.id, timeout_s=20)
        assert await owner(stores) == "w1"
        first.kill()  # SIGKILL: no cleanup, no handing over
        assert await first.wait() == -signal.SIGKILL

        # The takeover time comes from the setting (HITL_TAKEOVER_AFTER) this time, not the
        # flag: with it at 1 s the run is resumed well before the 10 s default would allow.
        second = await _spawn("w2", env | {"HITL_TAKEOVER_AFTER": "1s"}, log)
        await eventually(lambda: owner(stores), lambda o: o == "w2", timeout_s=8)
        assert (await stores.requests.get(rid)).state == State.PENDING_REVIEW
        assert count.read_text() == ""
        # The built-in policy's medium tier names no approvers: the members of its review
        # channel decide (Slack resolves the membership; here it is given).
        await stores.decide(rid, actor_groups=("#hitl-approvals",))
        done = await eventually(
            lambda: stores.runs.get(run.id), lambda r: r.state in RUN_DONE, timeout_s=20
        )
        assert done.state == RunState.FINISHED, log.read_text()
        assert count.read_text() == f"{rid} 42\n"  # executed exactly once
        assert await stores.requests.ids_between() == [rid]  # asked exactly once
        assert len(model.requests) == 2
        assert (await stores.requests.get(rid)).state == State.COMPLETED
        await eventually(lambda: owner(stores), lambda o: o is None)

        second.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(second.wait(), 10) == 0, log.read_text()
    finally:
        for proc in (first, second):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_a_run_that_keeps_killing_its_workers_is_ended_as_failed(
    stores: Stores, scripted: ModelFactory, workers: WorkerFactory
) -> None:
    run = await stores.start(agent="charging")
    await stores.redis.xgroup_create(keys.RUN_QUEUE, GROUP, id="0", mkstream=True)
    # Three workers took it in turn and died with it (delivered, never acknowledged).
    await stores.redis.xreadgroup(GROUP, "dead-1", {keys.RUN_QUEUE: ">"}, count=1)
    for dead in ("dead-2", "dead-3"):
        await stores.redis.xautoclaim(keys.RUN_QUEUE, GROUP, dead, 0, start_id="0-0")
    model = await scripted([])
    await workers(model, charging([]), "A", min_idle_ms=0, max_takeovers=3)
    done = await eventually(lambda: stores.runs.get(run.id), lambda r: r.state in RUN_DONE)
    assert done.state == RunState.FAILED and "handed to a new worker 4 times" in (done.error or "")
    assert model.requests == []  # the model is never called again for it
    await eventually(lambda: owner(stores), lambda o: o is None)  # acknowledged, not passed on


async def test_a_worker_offers_the_agents_its_operator_named_never_the_demo_toys(
    stores: Stores, scripted: ModelFactory, workers: WorkerFactory
) -> None:
    await workers(await scripted([]), charging([]), "A")
    directory = stores.store.agents
    assert await eventually(directory.offered, lambda o: o == ["charging"]) == ["charging"]
    assert AgentCatalog().offered == []  # claw and refunds run when named, never offered
    assert AgentCatalog([COUNTING]).offered == ["counting"]
