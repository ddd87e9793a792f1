"""The worker's ask_human with options: the question carries them, the model reads back
the option chosen, and options out of bounds go back to the model, never to a person."""

from __future__ import annotations

import asyncio

from bot.core.models import RunState
from bot.sandbox.model import after_tool, call, say
from tests.agent.conftest import ModelFactory, Stores
from tests.agent.test_gate import LLM, charging_agent


async def test_ask_human_with_options_reads_back_the_choice(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(
        [
            call("ask_human", question="Which one?", options=["Bear", "Penguin"]),
            say("Penguin it is.", expect=after_tool("UKID answered: Penguin")),
        ]
    )
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent([]), llm_for(model)).run(run.id))
    qid = await stores.waiting_on(run.id)
    assert (await stores.questions.get(qid)).options == ("Bear", "Penguin")
    await stores.questions.answer(qid, actor="UKID", answer="Penguin")
    done = await asyncio.wait_for(task, 10)
    assert done.state == RunState.FINISHED and done.result == "Penguin it is."


async def test_too_many_options_go_back_to_the_model(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    many = [f"option {i}" for i in range(11)]
    model = await scripted(
        [call("ask_human", question="Which?", options=many), say("ok", expect=after_tool())]
    )
    run = await stores.start()
    done = await asyncio.wait_for(stores.loop(charging_agent([]), llm_for(model)).run(run.id), 10)
    assert done.state == RunState.FINISHED
    assert "at most 10" in model.sent()[-1]["content"]
    assert await stores.redis.keys("hitl:*:q:*") == []  # nobody was asked
