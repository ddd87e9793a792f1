"""A worker's loops run supervised: an error at start or while reading restarts them with
backoff instead of ending the worker, and the runs in flight carry on."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.agent.llm import ChatClient
from bot.agent.loader import Agent, AgentCatalog
from bot.agent.worker import Worker, WorkerConfig
from bot.core.models import RunState
from bot.sandbox.model import say
from bot.store import keys
from bot.supervise import Backoff, Supervisor
from tests.agent.conftest import ModelFactory, Stores
from tests.support.poll import eventually

FAST = Backoff(first_s=0.05, cap_s=0.3)


async def test_a_worker_whose_group_cannot_be_made_at_start_recovers_and_drives_runs(
    stores: Stores, scripted: ModelFactory, caplog: pytest.LogCaptureFixture
) -> None:
    # The run queue's key holds a string: XGROUP CREATE fails with WRONGTYPE. Raised out
    # of the worker's run(), it would end the worker for good.
    await stores.redis.set(keys.RUN_QUEUE, "not a stream")
    model = await scripted([say("done")])
    agent = Agent.of("plain", "You answer.", [])
    tasks = Supervisor(backoff=FAST, grace_s=0.2, settle_s=0.2)
    async with ChatClient(model.base_url, "scripted", backoff_s=0.01) as llm:
        worker = Worker(
            stores,
            llm=llm,
            agents=AgentCatalog(known={agent.name: agent}),
            config=WorkerConfig(consumer="A", block_ms=50),
            tasks=tasks,
        )
        stop = asyncio.Event()
        running = asyncio.create_task(worker.run(stop))
        try:

            async def problem() -> str | None:
                return "; ".join(d.part for d in tasks.down()) or None

            line = await eventually(problem, lambda p: p is not None and "worker" in p)
            assert line == "task:worker"
            await stores.redis.delete(keys.RUN_QUEUE)
            run = await stores.start(agent="plain")
            done = await eventually(
                lambda: stores.runs.get(run.id), lambda r: r.state == RunState.FINISHED
            )
            assert done.state == RunState.FINISHED
            await eventually(problem, lambda p: p is None)
        finally:
            stop.set()
            await asyncio.wait_for(running, 10)
    failures = [r for r in caplog.records if getattr(r, "task", None) == "worker"]
    failures = [r for r in failures if r.levelno >= logging.WARNING]
    assert failures and len(failures) == tasks.tasks["worker"].restarts
    assert sum(r.exc_info is not None for r in failures) == 1  # the same error, one traceback
