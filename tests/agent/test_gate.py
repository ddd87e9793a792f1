"""The three checks at the tool boundary, end to end: scripted model, real Valkey, real loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from redis.asyncio.connection import AbstractConnection

from bot.agent import messages as msg
from bot.agent.gate import ToolGate, question_id, request_id
from bot.agent.llm import ChatClient, ToolCall
from bot.agent.loader import Agent
from bot.agent.loop import LoopConfig
from bot.agent.tools import ask_tool, tool
from bot.core.models import Decision, QuestionState, RunState
from bot.core.policy import parse_policy
from bot.core.states import Event, State
from bot.db.hub import hub_for
from bot.gate.corrections import stop_run
from bot.sandbox.model import ScriptedModel, after_tool, call, say
from bot.store import audit, keys
from tests.agent.conftest import AheadClock, ModelFactory, Stores
from tests.support.poll import eventually

LLM = Callable[[ScriptedModel], ChatClient]


def workers_gate(stores: Stores, agent: Agent | None = None) -> ToolGate:
    """The gate as a worker builds it: with the run store, so a stop is seen, and the
    agent's own tool settings (`review=False`) merged into the policy."""
    return ToolGate(
        requests=stores.requests,
        questions=stores.questions,
        steering=stores.steering,
        run_audit=stores.run_audit,
        policy=stores.policy if agent is None else agent.merged_policy(stores.policy),
        runs=stores.runs,
        trusted=stores.trusted,
    )


def charging_agent(effects: list[dict[str, Any]], **options: Any) -> Agent:
    """`charge` is gated (medium); `note` is free; both record every execution."""

    def undo(amount: int, idempotency_key: str) -> None:
        effects.append({"undo": amount, "key": idempotency_key})
        if options.get("undo_fails"):
            raise RuntimeError("the bank is down too")

    @tool(risk="medium", compensate=undo if options.get("compensate") else None)
    def charge(amount: int, idempotency_key: str) -> str:
        """Charge the customer."""
        effects.append({"charge": amount, "key": idempotency_key})
        if options.get("fails"):
            raise RuntimeError("card declined")
        return f"charged {amount}"

    @tool(risk="low", review=False)
    async def note(text: str) -> str:
        """Write an internal note."""
        effects.append({"note": text})
        return f"noted {text}"

    return Agent.of("charging", "You charge customers.", [charge, note, ask_tool()])


async def test_approve_then_execute(stores: Stores, scripted: ModelFactory, llm_for: LLM) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [call("charge", amount=30), say("Done.", expect=after_tool("Approved by UKID"))]
    )
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent(effects), llm_for(model)).run(run.id))

    rid = await stores.waiting_on(run.id)
    assert (await stores.runs.get(run.id)).state == RunState.WAITING
    assert effects == []  # nothing runs before the person decides
    await stores.decide(rid)
    done = await asyncio.wait_for(task, 10)

    assert done.state == RunState.FINISHED and done.result == "Done."
    assert effects == [{"charge": 30, "key": rid}]  # once, with the request id as its key
    req = await stores.requests.get(rid)
    assert req.state == State.COMPLETED and req.detail == "charged 30"
    assert req.requester == "agent:charging" and req.run_id == run.id
    assert model.sent()[-1]["content"] == "Approved by UKID. Result: charged 30"
    assert len(model.sent(0)) == 2 and model.requests[0]["tools"][0]["function"]["name"] == "charge"


async def test_free_tool_runs_without_a_person(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("note", text="hi"), say("ok", expect=after_tool("noted hi"))])
    run = await stores.start()
    done = await stores.loop(charging_agent(effects), llm_for(model)).run(run.id)
    assert done.state == RunState.FINISHED
    assert effects == [{"note": "hi"}]
    (rid,) = await stores.requests.ids_between()
    req = await stores.requests.get(rid)
    assert (
        req.state == State.COMPLETED
        and req.resolution
        and req.resolution.reason_code == "no_review"
    )


async def test_reject_and_the_model_reads_the_reason(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [call("charge", amount=999), say("Sorry.", expect=after_tool("Rejected by UKID"))]
    )
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid, Event.REJECT, reason_code="too_risky", text="way too much")
    done = await asyncio.wait_for(task, 10)

    assert done.state == RunState.FINISHED and effects == []
    result = model.sent()[-1]["content"]
    assert "too_risky" in result and "way too much" in result and "did not run" in result
    assert (await stores.requests.get(rid)).state == State.CANCELLED


async def test_nobody_answers_and_the_default_rejects(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    quick = parse_policy(
        {
            "tiers": {
                t: {"review_timeout": "200ms", "reviewers": {"users": ["UKID"]}, "approvers": ["*"]}
                for t in ("low", "medium", "high", "critical")
            }
        }
    )
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=5), say("ok", expect=after_tool())])
    run = await stores.start()
    # No sweeper runs: the gate fires the due timeout itself.
    done = await asyncio.wait_for(
        stores.loop(charging_agent(effects), llm_for(model), policy=quick).run(run.id), 10
    )
    assert done.state == RunState.FINISHED and effects == []
    assert model.sent()[-1]["content"] == msg.AUTO_REJECTED
    assert "the default was to reject" in msg.AUTO_REJECTED
    (rid,) = await stores.requests.ids_between()
    assert (await stores.requests.get(rid)).state == State.AUTO_REJECTED


async def test_edited_arguments_are_the_ones_that_run(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=500), say("ok", expect=after_tool("edited"))])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid, Event.EDIT_AND_APPROVE, new_args={"amount": 50})
    await asyncio.wait_for(task, 10)
    assert effects == [{"charge": 50, "key": rid}]
    assert '{"amount": 50}' in model.sent()[-1]["content"]


async def test_steering_cancels_exactly_the_next_call(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [
            call("note", text="bear"),
            call(
                "note", text="penguin", expect=after_tool("Cancelled. The person says: No, wait!")
            ),
            say("ok", expect=after_tool("noted penguin")),
        ]
    )
    run = await stores.start()
    s = await stores.steering.push(
        run.id, "No, wait! The penguin!", actor="UKID", source="C1:1700000000.000100"
    )
    done = await stores.loop(charging_agent(effects), llm_for(model)).run(run.id)

    assert done.state == RunState.FINISHED
    assert effects == [{"note": "penguin"}]  # the first call never ran, the next one did
    assert len(await stores.requests.ids_between()) == 1  # only the second call got that far
    audit = [json.loads(x) for x in await stores.redis.lrange(keys.run_audit(run.id), 0, -1)]
    steer = [e for e in audit if e["kind"] == "user_steering"]
    assert len(steer) == 1 and steer[0]["text"] == "No, wait! The penguin!"
    assert steer[0]["steering_id"] == s.id and steer[0]["tool"] == "note"
    events = await stores.redis.xrange(keys.events(keys.shard_of(run.id)))
    consumed = [f for _, f in events if f.get("kind") == "steer" and f["event"] == "consumed"]
    assert consumed == [
        {
            "kind": "steer",
            "id": s.id,
            "event": "consumed",
            "state": "consumed",
            "version": "0",
            "run_id": run.id,
            "source": "C1:1700000000.000100",
        }
    ]


async def test_hard_stop_steering_ends_the_run(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("note", text="x")])
    run = await stores.start()
    await stores.steering.push(run.id, "STOP", actor="UKID", hard_stop=True)
    done = await stores.loop(charging_agent(effects), llm_for(model)).run(run.id)
    assert done.state == RunState.STOPPED and effects == []
    assert len(model.requests) == 1


async def test_ask_gets_the_answer(stores: Stores, scripted: ModelFactory, llm_for: LLM) -> None:
    model = await scripted(
        [
            call("ask_human", question="Which one?"),
            say("The penguin it is.", expect=after_tool("UKID answered: the penguin")),
        ]
    )
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent([]), llm_for(model)).run(run.id))
    qid = await stores.waiting_on(run.id)
    q = await stores.questions.get(qid)
    assert q.question == "Which one?" and q.run_id == run.id and q.channel == "C1"
    await stores.questions.answer(qid, actor="UKID", answer="the penguin")
    done = await asyncio.wait_for(task, 10)
    assert done.state == RunState.FINISHED and done.result == "The penguin it is."
    events = await stores.redis.xrange(keys.events(keys.shard_of(qid)))
    assert any(f.get("id") == qid and f["event"] == "delivered" for _, f in events)


async def test_unanswered_question_tells_the_model_not_to_guess(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted([call("ask_human", question="?"), say("ok", expect=after_tool())])
    run = await stores.start()
    loop = stores.loop(charging_agent([]), llm_for(model), LoopConfig(ask_timeout_ms=200))
    done = await asyncio.wait_for(loop.run(run.id), 10)
    assert done.state == RunState.FINISHED
    assert model.sent()[-1]["content"] == msg.NO_ANSWER and "Do not guess" in msg.NO_ANSWER
    asked = (await stores.runs.transcript(run.id))[2]["tool_calls"][0]["id"]
    q = await stores.questions.get(question_id(run.id, asked))
    assert q.state == QuestionState.EXPIRED


async def test_stop_ends_the_run_and_cancels_the_pending_request(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=1)])
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stop_run(
        stores.runs, stores.requests, stores.questions, stores.steering, run.id, actor="UKID"
    )
    done = await asyncio.wait_for(task, 10)
    assert done.state == RunState.STOPPED and done.waiting_on is None
    assert (await stores.requests.get(rid)).state == State.CANCELLED
    assert effects == [] and len(model.requests) == 1


async def test_failure_with_compensation_rolls_back(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=7), say("ok", expect=after_tool("rolled back"))])
    run = await stores.start()
    agent = charging_agent(effects, fails=True, compensate=True)
    task = asyncio.create_task(stores.loop(agent, llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    await stores.decide(rid)
    await asyncio.wait_for(task, 10)
    assert effects == [{"charge": 7, "key": rid}, {"undo": 7, "key": rid}]
    req = await stores.requests.get(rid)
    assert req.state == State.ROLLED_BACK and "card declined" in (req.detail or "")


async def test_failure_without_compensation_needs_a_person(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    for options in ({"fails": True}, {"fails": True, "compensate": True, "undo_fails": True}):
        await stores.redis.flushdb()
        effects: list[dict[str, Any]] = []
        model = await scripted([call("charge", amount=7), say("ok", expect=after_tool("by hand"))])
        run = await stores.start()
        task = asyncio.create_task(
            stores.loop(charging_agent(effects, **options), llm_for(model)).run(run.id)
        )
        rid = await stores.waiting_on(run.id)
        await stores.decide(rid)
        await asyncio.wait_for(task, 10)
        req = await stores.requests.get(rid)
        assert req.state == State.MANUAL_INTERVENTION, options
        events = await stores.redis.xrange(keys.events(keys.shard_of(rid)))
        assert any(f["id"] == rid and f["state"] == "manual_intervention" for _, f in events)


async def test_malformed_arguments_go_back_to_the_model_only(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [
            call("charge", '{"amount": "lots"'),
            call("charge", amount="lots", expect=after_tool("not valid JSON")),
            call("charge", amount=1, extra=2, expect=after_tool("amount")),
            call("refund_everything", expect=after_tool("extra")),
            say("giving up", expect=after_tool("no tool named refund_everything")),
        ]
    )
    run = await stores.start()
    done = await stores.loop(charging_agent(effects), llm_for(model)).run(run.id)
    assert done.state == RunState.FINISHED and done.result == "giving up"
    assert effects == [] and await stores.requests.ids_between() == []
    assert await stores.questions.redis.keys("*:q:*") == []


async def test_turn_limit_ends_the_run(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted([call("note", text=str(i)) for i in range(5)])
    run = await stores.start()
    loop = stores.loop(charging_agent([]), llm_for(model), LoopConfig(max_turns=3))
    done = await loop.run(run.id)
    assert done.state == RunState.TURN_LIMIT and done.turns == 3
    assert done.error == msg.TURN_LIMIT.format(turns=3)


async def test_model_failure_fails_the_run(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    model = await scripted([])
    model.malformed()
    run = await stores.start()
    done = await stores.loop(charging_agent([]), llm_for(model)).run(run.id)
    assert done.state == RunState.FAILED and "not a chat completion" in (done.error or "")


async def test_resumed_run_waits_on_the_same_request_and_runs_once(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=3), say("ok", expect=after_tool("Approved"))])
    run = await stores.start()
    agent = charging_agent(effects)
    first = asyncio.create_task(stores.loop(agent, llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    first.cancel()  # the worker goes away mid-wait
    await asyncio.gather(first, return_exceptions=True)

    second = asyncio.create_task(stores.loop(agent, llm_for(model)).run(run.id))
    await eventually(lambda: hub_for(stores.redis).waiting == 1, what="the resumed run waiting")
    await stores.decide(rid)
    done = await asyncio.wait_for(second, 10)
    assert done.state == RunState.FINISHED
    assert effects == [{"charge": 3, "key": rid}]
    assert len(model.requests) == 2  # no second proposal: the resumed run did not re-ask
    assert await stores.requests.ids_between() == [rid]


async def test_resumed_run_never_reruns_a_tool_that_was_executing(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted([call("charge", amount=3), say("ok", expect=after_tool("unknown"))])
    run = await stores.start()
    # A worker proposed the call, it was approved and claimed, then the worker died.
    first = await llm_for(model).complete([{"role": "user", "content": "go"}])
    messages = [
        {"role": "system", "content": "You charge customers."},
        {"role": "user", "content": "go"},
        first.message,
    ]
    await stores.runs.save_transcript(run.id, messages)
    await stores.runs.update(run.id, turns=1)
    rid = request_id(run.id, first.tool_calls[0].id)
    made = await stores.requests.create(
        stores.policy,
        tool="charge",
        args={"amount": 3},
        requester="agent:charging",
        run_id=run.id,
        idempotency_key=f"{run.id}:{first.tool_calls[0].id}",
        owner=run.owner,  # what the worker files is the run owner's
    )
    assert made.request.id == rid
    await stores.decide(rid)
    await stores.requests.transition(rid, Decision(event=Event.CLAIM))

    done = await stores.loop(charging_agent(effects), llm_for(model)).run(run.id)
    assert done.state == RunState.FINISHED and effects == []
    assert (await stores.requests.get(rid)).state == State.MANUAL_INTERVENTION
    assert model.sent()[-1]["content"] == msg.OUTCOME_UNKNOWN.format(tool="charge")


async def test_resume_after_a_long_wait_sends_a_summary(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    long_note = "x" * 300
    model = await scripted(
        [
            call("note", text=long_note),
            call("note", text="two"),
            call("charge", amount=1),
            say("done", expect=after_tool("Approved")),
        ]
    )
    run = await stores.start(prompt="Charge them once.")
    clock = AheadClock()
    config = LoopConfig(compact_after_chars=500, long_wait_ms=60_000)
    loop = replace(stores, clock=clock).loop(charging_agent([]), llm_for(model), config)
    task = asyncio.create_task(loop.run(run.id))
    rid = await stores.waiting_on(run.id)
    clock.advance(60_000)  # a long wait, by the run's clock; the free calls before it were quick
    await stores.decide(rid)
    await asyncio.wait_for(task, 10)

    before, after = model.sent(2), model.sent(3)
    assert len(before) == 6  # system, user, and two full exchanges before the charge
    roles = [m["role"] for m in after]
    assert roles == ["system", "user", "assistant", "tool"]
    assert after[0]["content"] == "You charge customers."
    summary = after[1]["content"]
    assert "Task: Charge them once." in summary and "note(" in summary and "noted two" in summary
    assert long_note not in summary  # long results are clipped
    assert after[2]["tool_calls"][0]["function"]["name"] == "charge"
    assert after[3]["content"].startswith("Approved by UKID")
    stored = await stores.runs.transcript(run.id)
    assert stored == [*after, {"role": "assistant", "content": "done"}]


async def test_a_reused_call_id_is_a_new_call(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [
            call("note", text="one", call_id="call_0"),
            call("note", text="two", call_id="call_0", expect=after_tool("noted one")),
            say("ok", expect=after_tool("noted two")),
        ]
    )
    run = await stores.start()
    done = await stores.loop(charging_agent(effects), llm_for(model)).run(run.id)
    assert done.state == RunState.FINISHED
    assert effects == [{"note": "one"}, {"note": "two"}]
    ids = [c["id"] for m in model.sent() for c in m.get("tool_calls") or ()]
    assert ids == ["call_0", "call_0-t2.0"]


async def test_a_stop_before_the_wait_still_withdraws_the_request(stores: Stores) -> None:
    run = await stores.start()
    await stores.runs.update(run.id, stop_requested=True)  # lands before waiting_on is set
    gate = workers_gate(stores)
    agent = charging_agent([])
    out = await gate.check(ToolCall("c1", "charge", '{"amount": 1}'), agent.tools, run_id=run.id)
    assert out.stop and out.status == "stopped"
    assert (await stores.requests.get(request_id(run.id, "c1"))).state == State.CANCELLED
    out = await gate.check(
        ToolCall("c2", "ask_human", '{"question": "?"}'), agent.tools, run_id=run.id
    )
    assert (
        out.stop
        and (await stores.questions.get(question_id(run.id, "c2"))).state == QuestionState.CANCELLED
    )


async def test_a_stopped_runs_free_call_never_runs(stores: Stores) -> None:
    """The stop flag is read with the steering queue, before every call: a free tool of a
    stopped run is not claimed, so it does not run, and its request ends withdrawn."""
    run = await stores.start()
    await stores.runs.update(run.id, stop_requested=True)
    effects: list[dict[str, Any]] = []
    agent = charging_agent(effects)
    gate = workers_gate(stores, agent)
    out = await gate.check(ToolCall("c1", "note", '{"text": "hi"}'), agent.tools, run_id=run.id)
    assert out.stop and effects == []
    req = await stores.requests.get(request_id(run.id, "c1"))
    assert req.state == State.CANCELLED


async def test_the_correction_and_the_stop_flag_are_read_together(stores: Stores) -> None:
    run = await stores.start()
    await stores.steering.push(run.id, "use EUR", actor="UBOSS")
    s, stop = await stores.steering.pop_and_stop(run.id)
    assert s is not None and s.text == "use EUR" and not stop
    assert await stores.steering.pop_and_stop(run.id) == (None, False)  # handed out once
    await stores.runs.update(run.id, stop_requested=True)
    assert await stores.steering.pop_and_stop(run.id) == (None, True)


class _Trips:
    """Counts what the client sends: one send is one round trip (a pipeline is one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        send = AbstractConnection.send_packed_command

        async def counted(
            conn: AbstractConnection, command: Any, check_health: bool = True
        ) -> None:
            head = bytes(command[0] if isinstance(command, list) else command)[:40]
            if b"SUBSCRIBE" not in head and b"PING" not in head:  # the run follower's own
                self.n += 1
            await send(conn, command, check_health)

        monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)


async def test_a_free_call_is_two_round_trips(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A free call of a worker's run is created already claimed, with the run's
    corrections and stop flag checked in the same step, then its outcome is reported: two
    round trips, and the full trail from review to completed in its audit."""
    run = await stores.start()
    effects: list[dict[str, Any]] = []
    agent = charging_agent(effects)
    gate = workers_gate(stores, agent)
    warm = iter(range(1000))

    async def call_once() -> bool:
        c = ToolCall(f"w{next(warm)}", "note", '{"text": "warm"}')
        await gate.check(c, agent.tools, run_id=run.id)
        return gate.signals is not None and gate.signals.clear(run.id)

    await eventually(call_once, lambda clear: clear)  # the run's follower is up
    trips = _Trips(monkeypatch)
    out = await gate.check(ToolCall("c1", "note", '{"text": "hi"}'), agent.tools, run_id=run.id)
    assert out.status == "completed" and effects[-1] == {"note": "hi"}
    assert trips.n == 2
    req = await stores.requests.get(request_id(run.id, "c1"))
    assert req.state == State.COMPLETED
    trail = [e.to_state for e in await audit.entries(stores.redis, req.id)]
    assert trail == ["pending_review", "approved", "executing", "completed"]


async def test_a_correction_comes_before_bad_arguments_and_unknown_tools(
    stores: Stores,
) -> None:
    """The person spoke before the call was made: the model reads that, whatever else
    was wrong with the call, and the correction is handed out once."""
    run = await stores.start()
    effects: list[dict[str, Any]] = []
    agent = charging_agent(effects)
    gate = workers_gate(stores, agent)
    calls = [
        ToolCall("c1", "charge", '{"amount": "lots"}'),  # does not fit the tool
        ToolCall("c2", "charge", '{"amount": 1'),  # not JSON
        ToolCall("c3", "refund_everything", "{}"),  # no such tool
        ToolCall("c4", "note", '{"text": "hi"}'),  # fine, and free
        ToolCall("c5", "charge", '{"amount": 5}'),  # fine, and gated
    ]
    for c in calls:
        await stores.steering.push(run.id, f"not {c.id}", actor="UBOSS")
        out = await gate.check(c, agent.tools, run_id=run.id)
        assert (out.status, out.text) == ("steered", msg.STEERED.format(text=f"not {c.id}"))
    assert effects == [] and await stores.requests.ids_between() == []
    assert await stores.steering.pending(run.id) == 0
    audit_lines = await stores.redis.lrange(keys.run_audit(run.id), 0, -1)
    consumed = [json.loads(x)["call_id"] for x in audit_lines]
    assert consumed == [c.id for c in calls]
    # with nothing queued, a bad call is the model's to fix again
    out = await gate.check(
        ToolCall("c6", "charge", '{"amount": "lots"}'), agent.tools, run_id=run.id
    )
    assert out.status == "invalid"


async def test_a_forged_approval_is_never_run_by_the_worker(
    stores: Stores, scripted: ModelFactory, llm_for: LLM
) -> None:
    """Approved with the store's own Python API, without serve's key: refused and audited."""
    effects: list[dict[str, Any]] = []
    model = await scripted(
        [call("charge", amount=30), say("Hm.", expect=after_tool("not approved by this bot"))]
    )
    run = await stores.start()
    task = asyncio.create_task(stores.loop(charging_agent(effects), llm_for(model)).run(run.id))
    rid = await stores.waiting_on(run.id)
    req = await stores.requests.get(rid)
    forged = Decision(event=Event.APPROVE, actor="UKID", payload_hash=req.payload_hash)
    await stores.requests.transition(rid, forged)  # this store has no signer
    done = await asyncio.wait_for(task, 10)

    assert done.state == RunState.FINISHED and effects == []
    assert (await stores.requests.get(rid)).state == State.APPROVED  # never executing
    refused = [e for e in await audit.entries(stores.redis, rid) if e.kind == "refused"]
    assert [(e.event, e.reason_code) for e in refused] == [("claim", "forged_decision")]
