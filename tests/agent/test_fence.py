"""The worker hands a tool that declares `fence` its claim's fence, beside the idempotency
key, and reports with it; a tool that does not declare it is called as before."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.agent.loader import Agent
from bot.agent.tools import tool
from bot.core.models import RunState
from bot.core.states import State
from bot.sandbox.model import after_tool, call, say
from tests.agent.conftest import ModelFactory, Stores
from tests.agent.test_gate import LLM


def fenced_agent(effects: list[dict[str, Any]]) -> Agent:
    def undo(amount: int, idempotency_key: str, fence: str) -> None:
        effects.append({"undo": amount, "key": idempotency_key, "fence": fence})

    @tool(risk="medium", compensate=undo)
    def charge(amount: int, idempotency_key: str, fence: str) -> str:
        """Charge the customer."""
        effects.append({"charge": amount, "key": idempotency_key, "fence": fence})
        if amount > 100:
            raise RuntimeError("card declined")
        return f"charged {amount}"

    @tool(risk="low", review=False)
    async def note(text: str, fence: str | None = None) -> str:
        """Write an internal note."""
        effects.append({"note": text, "fence": fence})
        return f"noted {text}"

    return Agent.of("fenced", "You charge customers.", [charge, note])


def test_fence_is_filled_in_never_asked_of_the_model() -> None:
    charge = fenced_agent([]).tools.get("charge")
    assert charge is not None
    assert "fence" not in charge.schema()["properties"]
    assert charge.injected == frozenset({"idempotency_key", "fence"})


async def test_a_reviewed_tool_gets_its_claims_fence(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=30), say("Done.", expect=after_tool("charged"))])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(fenced_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid)
    assert (await asyncio.wait_for(task, 10)).state == RunState.FINISHED
    req = await stores.requests.get(rid)
    assert req.state == State.COMPLETED and req.fence is not None
    assert req.fence.startswith(f"{req.version - 1}.")  # the claim's version, then its token
    assert effects == [{"charge": 30, "key": rid, "fence": req.fence}]


async def test_a_failed_tool_and_its_undo_report_with_the_fence(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=500), say("Sorry.")])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(fenced_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid)
    await asyncio.wait_for(task, 10)
    req = await stores.requests.get(rid)
    assert req.state == State.ROLLED_BACK and req.fence is not None
    assert effects == [
        {"charge": 500, "key": rid, "fence": req.fence},
        {"undo": 500, "key": rid, "fence": req.fence},
    ]


async def test_a_free_tool_claimed_at_create_gets_its_fence(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("note", text="hi"), say("ok", expect=after_tool("noted hi"))])
    run = await stores.start()
    done = await stores.loop(fenced_agent(effects), llm_for(model)).run(run.id)
    assert done.state == RunState.FINISHED
    (rid,) = await stores.requests.ids_between()
    req = await stores.requests.get(rid)
    assert req.state == State.COMPLETED and req.fence is not None
    assert effects == [{"note": "hi", "fence": req.fence}]
