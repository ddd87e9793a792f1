"""The shipped agents, driven by the demo's rule-based claw model and by scripts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.agent.llm import ChatClient
from bot.core.models import RiskTier, RunState
from bot.core.states import Event, State
from bot.demo.agents import claw, refunds
from bot.demo.claw_script import claw_responder
from bot.sandbox.model import ScriptedModel, after_tool, call, say
from tests.agent.conftest import ModelFactory, Stores
from tests.support.poll import eventually

LLM = Callable[[ScriptedModel], ChatClient]


def calls(model: ScriptedModel) -> list[str]:
    """Every tool call the model made, as name(args), in order (the last request has all)."""
    return [
        f"{c['function']['name']}{c['function']['arguments']}"
        for m in model.sent()
        for c in m.get("tool_calls") or ()
    ]


async def test_claw_asks_then_drops_on_the_bear_once_approved(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(claw_responder)
    run = await stores.start(agent="claw", prompt="Get me the bear!")
    task = asyncio.create_task(stores.loop(claw.agent, llm_for(model)).run(run.id))

    qid = await stores.waiting_on(run.id)
    assert (await stores.questions.get(qid)).question.startswith("Is this the one?")
    await stores.questions.answer(qid, actor="UTINA", answer="yes!")
    moved_on = await eventually(
        lambda: stores.runs.get(run.id), lambda r: r.waiting_on not in (None, qid)
    )
    assert moved_on.waiting_on is not None
    rid = moved_on.waiting_on
    req = await stores.requests.get(rid)
    assert (req.tool, req.args, req.requester) == ("drop_claw", {"target": "bear"}, "claw-agent")
    await stores.decide(rid, actor="UTINA")
    done = await asyncio.wait_for(task, 10)

    assert done.state == RunState.FINISHED and done.result == "Got it! Here is your bear."
    assert calls(model) == [
        'move_claw{"direction": "left", "cm": 10}',
        'move_claw{"direction": "left", "cm": 10}',
        'ask_kid{"question": "Is this the one? The claw is over the bear."}',
        'drop_claw{"target": "bear"}',
    ]
    assert claw.machine(run.id).coins == 0


async def test_claw_follows_no_wait_the_penguin(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(claw_responder)
    run = await stores.start(agent="claw", prompt="Get me the bear!")
    await stores.steering.push(run.id, "No, wait! The penguin!", actor="UTINA")
    task = asyncio.create_task(stores.loop(claw.agent, llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    assert (await stores.requests.get(rid)).args == {"target": "penguin"}
    await stores.decide(rid, actor="UTINA")
    done = await asyncio.wait_for(task, 10)

    assert done.result == "Got it! Here is your penguin."
    sent = model.sent()
    assert sent[3] == {
        "role": "tool",
        "tool_call_id": sent[2]["tool_calls"][0]["id"],
        "content": "Cancelled. The person says: No, wait! The penguin!",
    }
    assert calls(model)[1:] == [
        'move_claw{"direction": "right", "cm": 10}',
        'move_claw{"direction": "right", "cm": 5}',
        'drop_claw{"target": "penguin"}',
    ]


async def test_claw_apologises_when_the_drop_is_rejected(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(claw_responder)
    run = await stores.start(agent="claw", prompt="Get me the duck")
    await stores.steering.push(run.id, "the duck, go", actor="UTINA")
    task = asyncio.create_task(stores.loop(claw.agent, llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid, Event.REJECT, actor="UTINA", reason_code="wrong_target")
    done = await asyncio.wait_for(task, 10)
    assert done.result is not None and done.result.startswith("Sorry! I won't drop the claw.")
    assert claw.machine(run.id).coins == 1


async def test_refunds_above_the_threshold_are_high_risk(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(
        [
            call("lookup_order", order_id="A1002"),
            call(
                "issue_refund",
                order_id="A1002",
                amount=1250.0,
                currency="USD",
                reason="arrived broken",
                expect=after_tool('"total": 1250.0'),
            ),
            say("Refunded.", expect=after_tool("Refunded 1250.00 USD")),
        ]
    )
    run = await stores.start(agent="refunds", prompt="Refund order A1002, it arrived broken.")
    task = asyncio.create_task(stores.loop(refunds.agent, llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    req = await stores.requests.get(rid)
    assert req.risk == RiskTier.HIGH and req.state == State.PENDING_REVIEW
    await stores.decide(rid)
    assert (await asyncio.wait_for(task, 10)).state == RunState.FINISHED
    assert refunds.LEDGER.pop(rid)["amount"] == 1250.0


async def test_a_refused_refund_is_voided_not_left_for_a_person(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted(
        [
            call("issue_refund", order_id="A1001", amount=10, currency="USD", reason="late"),
            say("ok", expect=after_tool("rolled back")),
        ]
    )
    run = await stores.start(agent="refunds")
    task = asyncio.create_task(stores.loop(refunds.agent, llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    assert (await stores.requests.get(rid)).risk == RiskTier.MEDIUM
    await stores.decide(rid)
    await asyncio.wait_for(task, 10)
    req = await stores.requests.get(rid)
    assert req.state == State.ROLLED_BACK and "paid in EUR" in (req.detail or "")
