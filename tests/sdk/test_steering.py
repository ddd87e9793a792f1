"""The SDK steers like the worker, in both modes: a person's correction or stop (queued
as Slack queues it, through the store) comes before the run's next call, gated or
free, and withdraws the call the agent waits on."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from bot.core.states import State
from bot.errors import NotFound
from bot.gate.corrections import correct, stop_run
from bot.sdk import Gate, Rejected, RunStopped, Steered, require_approval
from bot.store.stores import StoreSet
from tests.sdk.conftest import caller_waits

RUN = "ext:refunds-1"


def _people(redis: Redis) -> StoreSet:
    """What serve's Slack handlers steer and stop with."""
    return StoreSet(redis)


async def _correct(redis: Redis, text: str) -> None:
    s = _people(redis)
    await correct(s.steering, s.requests, s.runs, RUN, text, actor="UKID")


@pytest.mark.parametrize("tool", ["refund", "move_claw"])  # gated, and free by policy
async def test_a_queued_correction_comes_before_the_next_call(
    gate: Gate, redis: Redis, tool: str
) -> None:
    await gate.submit("move_claw", {"n": 0}, run_id=RUN)  # the run exists from its first call
    await _correct(redis, "aim for the penguin")

    with pytest.raises(Steered) as got:
        await gate.request_approval(tool, {"amount": 5}, run_id=RUN)

    assert str(got.value) == "Cancelled. The person says: aim for the penguin"
    assert (got.value.text, got.value.actor) == ("aim for the penguin", "UKID")
    assert isinstance(got.value, Rejected)  # recipes that hand a rejection to the model do
    # read once: the call after it runs as usual
    again = await gate.request_approval("move_claw", {"n": 1}, run_id=RUN)
    assert again.state in (State.APPROVED, State.AUTO_APPROVED)
    entries = await _people(redis).run_audit.entries(RUN)
    assert [(e["kind"], e["text"]) for e in entries] == [("user_steering", "aim for the penguin")]


async def test_a_correction_withdraws_the_call_that_waits_and_raises_at_once(
    gate: Gate, redis: Redis
) -> None:
    waiting = asyncio.ensure_future(gate.request_approval("refund", {"amount": 5}, run_id=RUN))
    await caller_waits()

    await _correct(redis, "refund A2, not A1")

    with pytest.raises(Steered) as got:
        await asyncio.wait_for(waiting, 10)
    assert got.value.text == "refund A2, not A1"
    req = got.value.request
    assert req is not None and req.state == State.CANCELLED
    assert req.resolution is not None and req.resolution.reason_code == "superseded"


async def test_a_stop_raises_run_stopped_for_the_waiting_call_and_every_later_one(
    gate: Gate, redis: Redis
) -> None:
    waiting = asyncio.ensure_future(gate.request_approval("refund", {"amount": 5}, run_id=RUN))
    await caller_waits()
    s = _people(redis)

    run = await stop_run(s.runs, s.requests, s.questions, s.steering, RUN, actor="UKID")

    assert run.outside and run.state.value == "stopped"
    with pytest.raises(RunStopped, match="withdrawn by UKID \\(run_stopped\\)") as got:
        await asyncio.wait_for(waiting, 10)
    assert "stopped by a person. Do nothing more." in str(got.value)
    assert got.value.actor == "UKID"
    for tool in ("refund", "move_claw"):
        with pytest.raises(RunStopped):
            await gate.request_approval(tool, {"amount": 1}, run_id=RUN)


async def test_the_decorator_raises_steered_and_the_function_never_runs(
    gate: Gate, redis: Redis
) -> None:
    ran: list[int] = []

    @require_approval(gate, tool="move_claw", run_id=RUN)  # free by policy: no wait
    async def move(steps: int) -> str:
        ran.append(steps)
        return "moved"

    assert await move(1) == "moved"
    await _correct(redis, "stop moving")
    with pytest.raises(Steered, match="stop moving"):
        await move(2)
    assert ran == [1]
    assert await move(3) == "moved"


async def test_another_identitys_run_id_is_not_this_agents(gate: Gate, redis: Redis) -> None:
    await _people(redis).owners.claim(RUN, "someone-else")
    with pytest.raises(NotFound, match="No run with id"):
        await gate.submit("move_claw", {}, run_id=RUN)
