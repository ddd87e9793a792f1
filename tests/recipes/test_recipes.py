"""Each framework recipe, end to end: its tool waits for a click in Slack (the emulator)
on a real `hitl-bot serve`, while a scripted OpenAI-compatible model drives the agent.

Approve: the refund runs exactly once and the model reads its receipt. Reject: the
refund never runs and the model reads the person's reason. An infrastructure error (the
API unreachable, a wrong token) fails the run with the fix, instead of reaching the
model as "An error occurred while running the tool".
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pydantic import SecretStr

from bot.config import Settings
from bot.core.policy import parse_policy
from bot.core.states import State
from bot.errors import ConfigError, HitlError, StoreUnavailable
from bot.sandbox.model import Expect, ScriptedModel, after_tool, call, say
from bot.sdk import ApiUnavailable, Gate, Rejected
from examples import openai_refund
from tests.e2e.conftest import POLICY, Bot
from tests.recipes.conftest import (
    API_TOKEN,
    Refunds,
    approve,
    closed_port_url,
    pending,
    reject,
    running,
)
from tests.recipes.recipes import RECIPES, Recipe
from tests.support.poll import eventually

PROMPT = "Order A1 arrived broken; refund 40 EUR."
RECEIPT = "Refunded 40.00 EUR on order A1."
REFUND = call("refund", order_id="A1", amount=40, currency="EUR")


@pytest.fixture(params=RECIPES, ids=str)
def recipe(request: pytest.FixtureRequest) -> Recipe:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=["http", "direct"])
def gate_mode(request: pytest.FixtureRequest) -> str:
    """How the recipe's gate reaches the bot: HITL_API_URL, or REDIS_URL (direct mode)."""
    return str(request.param)


def _gate(bot: Bot, mode: str, redis_url: str) -> Gate:
    if mode == "http":
        return Gate(api_url=bot.url, api_token=API_TOKEN)
    settings = Settings(redis_url=SecretStr(redis_url))
    return Gate(settings=settings, policy=parse_policy(POLICY), requester="refunds-agent")


def _tool_results(model: ScriptedModel) -> list[str]:
    """What the model was told by tools: the tool messages of the last conversation it got,
    which holds the whole history."""
    if not model.requests:
        return []
    return [str(m.get("content")) for m in model.sent(-1) if m.get("role") == "tool"]


def _hitl_error(exc: BaseException) -> HitlError | None:
    """The hitl-bot error behind what a framework raised (frameworks wrap tool errors)."""
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if isinstance(e, HitlError):
            return e
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return None


async def test_approved_refund_runs_once_and_the_model_reads_its_receipt(
    bot: Bot,
    recipe: Recipe,
    gate_mode: str,
    redis_url: str,
    refunds: Refunds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refunds.watch(monkeypatch, recipe.module)
    script = [REFUND, say("Refund issued.", expect=after_tool(RECEIPT))]
    async with (
        ScriptedModel(script) as model,
        _gate(bot, gate_mode, redis_url) as gate,
        running(bot, recipe.run(PROMPT, gate, model.base_url)) as run,
    ):
        req = await approve(bot)
        assert await asyncio.wait_for(run, 30) == "Refund issued."

    assert refunds.issued == [("A1", 40, "EUR")]
    assert _tool_results(model) == [RECEIPT]
    done = await bot.requests.get(req.id)
    assert (done.tool, done.args) == (
        "issue_refund",
        {"order_id": "A1", "amount": 40, "currency": "EUR"},
    )
    assert (done.state, done.detail) == (State.COMPLETED, RECEIPT)  # the outcome, recorded


async def test_rejected_refund_never_runs_and_the_model_reads_why(
    bot: Bot,
    recipe: Recipe,
    gate_mode: str,
    redis_url: str,
    refunds: Refunds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refunds.watch(monkeypatch, recipe.module)
    why = "A1 was never shipped; the customer means A2"
    script = [REFUND, say("I did not refund A1.", expect=after_tool(why))]
    async with (
        ScriptedModel(script) as model,
        _gate(bot, gate_mode, redis_url) as gate,
        running(bot, recipe.run(PROMPT, gate, model.base_url)) as run,
    ):
        req = await reject(bot, "wrong_target", why)
        assert await asyncio.wait_for(run, 30) == "I did not refund A1."

    assert refunds.issued == []
    [told] = _tool_results(model)
    assert told.startswith("Not refunded: issue_refund was rejected by UALICE (wrong_target)")
    assert why in told
    assert (await bot.requests.get(req.id)).state == State.CANCELLED


async def _fails_loudly(recipe: Recipe, gate: Gate, model: ScriptedModel) -> HitlError:
    with pytest.raises(BaseException) as failed:
        await asyncio.wait_for(recipe.run(PROMPT, gate, model.base_url), 30)
    err = _hitl_error(failed.value)
    assert err is not None, f"{recipe} raised no hitl-bot error: {failed.value!r}"
    assert not isinstance(err, Rejected)
    # The model was never told anything by the tool: no "An error occurred while running
    # the tool. Please try again.", no second turn that would end the run "successfully".
    assert _tool_results(model) == []
    return err


async def test_unreachable_api_fails_the_run_with_the_fix(
    bot: Bot, recipe: Recipe, refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe.module)
    script = [REFUND, say("Refund issued.")]
    async with (
        ScriptedModel(script) as model,
        Gate(api_url=closed_port_url(), api_token=API_TOKEN) as gate,
    ):
        err = await _fails_loudly(recipe, gate, model)
    assert isinstance(err, ApiUnavailable)
    assert "fix: check HITL_API_URL" in str(err)
    assert refunds.issued == []


async def test_unreachable_store_fails_the_run_in_direct_mode(
    bot: Bot, recipe: Recipe, refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe.module)
    script = [REFUND, say("Refund issued.")]
    dead = closed_port_url().replace("http://", "redis://")
    async with ScriptedModel(script) as model, _gate(bot, "direct", dead) as gate:
        err = await _fails_loudly(recipe, gate, model)
    assert isinstance(err, StoreUnavailable)
    assert refunds.issued == []


async def test_wrong_token_fails_the_run_with_the_fix(
    bot: Bot, recipe: Recipe, refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe.module)
    script = [REFUND, say("Refund issued.")]
    async with (
        ScriptedModel(script) as model,
        Gate(api_url=bot.url, api_token="not-the-servers-token") as gate,
    ):
        err = await _fails_loudly(recipe, gate, model)
    assert isinstance(err, ConfigError)
    assert "fix: set HITL_API_TOKEN" in str(err)
    assert refunds.issued == []
    assert await bot.requests.list_pending() == []  # nothing reached Slack either


async def test_plain_loop_hands_a_correction_to_the_model(
    bot: Bot, refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A correction queued for the run (`POST /v1/runs/RUN/steer`) while its refund waits
    withdraws the refund at once: the model reads the person's words as the tool's result,
    and the refund never runs."""
    plain = next(r for r in RECIPES if r.module is openai_refund)
    refunds.watch(monkeypatch, plain.module)
    fix = "the customer means order A2, not A1"
    script = [REFUND, say("Refunding A2 instead.", expect=Expect(role="tool", contains=fix))]
    async with (
        ScriptedModel(script) as model,
        _gate(bot, "http", "") as gate,
        running(bot, plain.run(PROMPT, gate, model.base_url)) as run,
        httpx.AsyncClient(
            base_url=bot.url, headers={"Authorization": f"Bearer {API_TOKEN}"}
        ) as api,
    ):
        req = await eventually(lambda: pending(bot), timeout_s=20)
        steered = await api.post("/v1/runs/refunds/steer", json={"text": fix})
        assert steered.status_code == 201, steered.text
        assert await asyncio.wait_for(run, 30) == "Refunding A2 instead."
        steering = await api.get("/v1/runs/refunds/steering")
        assert steering.status_code == 204, "the words were handed over once, not twice"

    assert refunds.issued == []
    assert (await bot.requests.get(req.id)).state == State.CANCELLED
    told = [m for m in model.sent(-1) if m["role"] in ("tool", "user")]
    assert told[-1]["role"] == "tool"
    assert told[-1]["content"] == f"Not refunded: Cancelled. The person says: {fix}"


async def test_plain_loop_reads_a_correction_queued_between_calls(
    bot: Bot, refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A correction queued while no call of the run waits reaches the model as a user
    message before its next turn: the loop's own `gate.steering_sync`."""
    plain = next(r for r in RECIPES if r.module is openai_refund)
    refunds.watch(monkeypatch, plain.module)
    fix = "refund in GBP, not EUR"
    async with httpx.AsyncClient(
        base_url=bot.url, headers={"Authorization": f"Bearer {API_TOKEN}"}
    ) as api:
        # The agent has used its run id (here: read its steering, as the loop does), so the
        # run exists; then a person queues a correction while none of its calls waits.
        assert (await api.get("/v1/runs/refunds/steering")).status_code == 204
        steered = await api.post("/v1/runs/refunds/steer", json={"text": fix})
        assert steered.status_code == 201, steered.text
    script = [say("Will do, in GBP.", expect=Expect(role="user", contains=fix))]
    async with (
        ScriptedModel(script) as model,
        _gate(bot, "http", "") as gate,
        running(bot, plain.run(PROMPT, gate, model.base_url)) as run,
    ):
        assert await asyncio.wait_for(run, 30) == "Will do, in GBP."
    assert model.sent(-1)[-1] == {"role": "user", "content": f"Correction from a person: {fix}"}
    assert refunds.issued == []
