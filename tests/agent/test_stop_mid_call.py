"""A hard stop reaches a tool that is already running, where it can be cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.agent import messages as msg
from bot.agent.gate import request_id
from bot.agent.llm import ChatClient
from bot.agent.loader import Agent
from bot.agent.tools import tool
from bot.core.models import RunState
from bot.core.states import State
from bot.gate.corrections import stop_run
from bot.sandbox.model import ScriptedModel, call
from tests.agent.conftest import ModelFactory, Stores


async def test_stop_cancels_a_running_async_tool(
    stores: Stores, scripted: ModelFactory, llm_for: Any
) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool(risk="low", review=False)
    async def dig(depth: int) -> str:
        """Dig for a long time."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "dug"

    model: ScriptedModel = await scripted([call("dig", depth=3)])
    run = await stores.start()
    llm: ChatClient = llm_for(model)
    task = asyncio.create_task(stores.loop(Agent.of("digger", "Dig.", [dig]), llm).run(run.id))
    await asyncio.wait_for(started.wait(), 10)
    await stop_run(
        stores.runs, stores.requests, stores.questions, stores.steering, run.id, actor="UKID"
    )
    done = await asyncio.wait_for(task, 10)  # well before the tool's 60 s
    assert cancelled.is_set()
    assert done.state == RunState.STOPPED
    call_id = (await stores.runs.transcript(run.id))[2]["tool_calls"][0]["id"]
    req = await stores.requests.get(request_id(run.id, call_id))
    # Cancelled part-way with no compensating action: a person checks what it did.
    assert req.state == State.MANUAL_INTERVENTION and req.detail == msg.STOPPED_MID_CALL
    assert len(model.requests) == 1  # the model is not asked again after the stop
