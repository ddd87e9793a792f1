"""The worker's built-in propose: the model offers candidate calls of one of its tools,
a person chooses one, and only that call runs."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.agent.loader import Agent
from bot.agent.tools import propose_tool
from bot.core.models import RunState
from bot.core.states import Event, State
from bot.sandbox.model import after_tool, call, say
from tests.agent.conftest import ModelFactory, Stores
from tests.agent.test_gate import LLM, charging_agent


def proposing_agent(effects: list[dict[str, Any]]) -> Agent:
    base = charging_agent(effects)
    return Agent.of("charging", "You charge customers.", [*base.tools, propose_tool()])


async def test_the_chosen_candidate_runs_and_no_other(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [
            call("propose", tool="charge", candidates=[{"amount": 30}, {"amount": 25}]),
            say("Done.", expect=after_tool("charged 25")),
        ]
    )
    run = await stores.start()
    task = asyncio.create_task(stores.loop(proposing_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    req = await stores.requests.get(rid)
    assert req.tool == "charge" and req.args == {} and effects == []
    assert req.candidates == ({"amount": 30}, {"amount": 25})
    await stores.decide(
        rid,
        Event.EDIT_AND_APPROVE,
        new_args={"amount": 25},
    )
    done = await asyncio.wait_for(task, 10)
    assert done.state == RunState.FINISHED
    assert effects == [{"charge": 25, "key": rid}]  # the chosen one, once
    assert (await stores.requests.get(rid)).state == State.COMPLETED


async def test_a_proposal_of_a_tool_the_agent_lacks_goes_back_to_the_model(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(
        [
            call("propose", tool="wire", candidates=[{"amount": 1}, {"amount": 2}]),
            say("ok", expect=after_tool()),
        ]
    )
    run = await stores.start()
    done = await asyncio.wait_for(stores.loop(proposing_agent([]), llm_for(model)).run(run.id), 10)
    assert done.state == RunState.FINISHED
    assert "not one of the tools" in model.sent()[-1]["content"]
    assert await stores.requests.list_pending() == []
