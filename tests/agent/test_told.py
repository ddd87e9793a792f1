"""What the model reads about a call a person changed or stopped: what really happened.

The tool result names the reason code and the person's text for a cancelled call,
and says so when a person's edit is what ran; never a made-up outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bot.agent.llm import ChatClient
from bot.agent.loader import Agent
from bot.agent.tools import tool
from bot.core.states import Event, State
from bot.demo.claw_script import claw_responder
from bot.errors import PayloadError
from bot.sandbox.model import ScriptedModel, call, say
from bot.store import audit, keys
from bot.store.tools import record, schema_of
from tests.agent.conftest import ModelFactory, Stores

LLM = Callable[[ScriptedModel], ChatClient]


def claw_agent(effects: list[dict[str, Any]]) -> Agent:
    @tool(risk="medium")
    def drop_claw(target: str) -> str:
        """Drop the claw."""
        effects.append({"target": target})
        return f"Grabbed the {target}!"

    return Agent.of("claw", "You work a claw.", [drop_claw])


def _last_tool_result(model: ScriptedModel) -> str:
    return str(next(m for m in reversed(model.sent()) if m.get("role") == "tool")["content"])


async def test_the_gate_records_the_tools_schema_before_anyone_is_asked(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted([call("drop_claw", target="bear"), say("ok")])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(claw_agent([]), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    req = await stores.requests.get(rid)
    schema = await schema_of(stores.requests.redis, req.requester, "drop_claw")
    assert schema is not None and schema["required"] == ["target"]
    assert schema["additionalProperties"] is False  # so an unknown argument is refused
    # Held as the worker's: a schema sent without it (as every API call's is) cannot
    # replace it, even under the same requester name.
    with pytest.raises(PayloadError, match="registered by the worker"):
        await record(stores.requests.redis, req.requester, "drop_claw", {"type": "object"})
    assert await schema_of(stores.requests.redis, req.requester, "drop_claw") == schema
    await stores.decide(rid, Event.APPROVE)
    await asyncio.wait_for(task, 10)


async def test_a_cancel_reaches_the_model_with_its_reason_code_and_text(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("drop_claw", target="bear"), say("ok")])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(claw_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid, Event.CANCEL, reason_code="machine_jammed", text="coin stuck")
    await asyncio.wait_for(task, 10)
    told = _last_tool_result(model)
    assert "machine_jammed" in told and "coin stuck" in told and "did not run" in told
    assert effects == []


async def test_an_edit_the_tool_refuses_is_cancelled_with_a_reason_and_said_so(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    """The schema a modal checked against can be stale; the tool's own check still wins."""
    effects: list[dict[str, Any]] = []
    model_turns = await scripted([call("drop_claw", target="bear"), say("ok")])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(claw_agent(effects), llm_for(model_turns)).run(run.id))
    rid = await stores.waiting_on(run.id)
    # Past the modal (its record of the schema gone), the edit adds an argument.
    await stores.requests.redis.delete(keys.TOOL_SCHEMAS)
    await stores.decide(rid, Event.EDIT_AND_APPROVE, new_args={"target": "bear", "force": 11})
    await asyncio.wait_for(task, 10)
    req = await stores.requests.get(rid)
    assert req.state == State.CANCELLED and effects == []
    # The request keeps the person's edit as its resolution; the cancel's why is audited.
    cancel = (await audit.entries(stores.requests.redis, rid))[-1]
    assert (cancel.event, cancel.reason_code) == ("cancel", "invalid_edit")
    assert "force" in (cancel.text or "")
    told = _last_tool_result(model_turns)
    assert "invalid_edit" in told and "force" in told and "did not run" in told
    # The claw demo's model reads that and tells the kid the truth, not "came up empty".
    reply = claw_responder(
        [
            {"role": "user", "content": "Get me the bear!"},
            {"role": "assistant", "tool_calls": [_drop_call()]},
            {"role": "tool", "tool_call_id": "c1", "content": told},
        ]
    )
    assert "came up empty" not in str(reply) and "did not drop" in str(reply)


def _drop_call() -> dict[str, Any]:
    return {
        "id": "c1",
        "type": "function",
        "function": {"name": "drop_claw", "arguments": '{"target": "bear"}'},
    }
