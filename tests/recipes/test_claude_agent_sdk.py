"""The Claude Agent SDK recipe (examples/claude_agent_sdk_refund.py), end to end: the
real `claude-agent-sdk` from PyPI runs the real Claude Code CLI it ships, offline against
the scripted Anthropic API, and its `can_use_tool` decides through a real `hitl-bot
serve` while people act in the Slack emulator.

Approved: the tool runs once and the model reads its receipt. Edited: what runs is what
the person approved. Rejected, or nobody deciding in time: it never runs and the model
reads why. A correction in the session's thread: the model reads the person's words. A
stop: the session ends, nothing ran. The gate out of reach (a wrong token): nothing runs.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.core.models import Run
from bot.core.states import State
from bot.sandbox.anthropic import ScriptedClaude, text, use
from bot.sdk import Gate
from bot.slack.blocks import render
from tests.e2e.conftest import Bot
from tests.recipes.conftest import API_TOKEN, Refunds, approve, pending, reject, running
from tests.support.poll import eventually

if importlib.util.find_spec("claude_agent_sdk") is None:  # the recipes extra installs it
    if os.environ.get("CI") == "true":
        pytest.fail("claude-agent-sdk is not installed and CI=true", pytrace=False)
    pytest.skip(
        "claude-agent-sdk is not installed (pip install -e '.[recipes]')", allow_module_level=True
    )

from examples import claude_agent_sdk_refund as recipe

pytestmark = pytest.mark.timeout(180)

PROMPT = "Order A1 arrived broken; refund 40 EUR."
RECEIPT = "Refunded 40.00 EUR on order A1."
TOOL = "mcp__shop__refund"  # Claude's name for the in-process server's tool
REFUND = use(TOOL, order_id="A1", amount=40, currency="EUR")
RUN_S = 90.0  # the CLI's start, and a person's click


@pytest.fixture
def claude_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(home),
    }


async def _session(
    bot: Bot, model: ScriptedClaude, env: dict[str, str], run_id: str, **kw: Any
) -> Any:
    gate = Gate(api_url=bot.url, api_token=API_TOKEN)
    env = env | {"ANTHROPIC_BASE_URL": model.base_url}
    return gate, recipe.run(PROMPT, gate, run_id=run_id, env=env, **kw)


async def test_approved_call_runs_once_and_the_model_reads_its_receipt(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    async with ScriptedClaude([REFUND, text("Refund issued.")]) as model:
        gate, work = await _session(bot, model, claude_env, "cas-approve")
        async with gate, running(bot, work) as run:
            req = await approve(bot)
            assert await asyncio.wait_for(run, RUN_S) == "Refund issued."
    assert refunds.issued == [("A1", 40, "EUR")]
    assert model.tool_results() == [RECEIPT]
    done = await bot.requests.get(req.id)
    assert (done.tool, done.run_id, done.state) == (TOOL, "cas-approve", State.COMPLETED)


async def test_an_edit_is_what_runs(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    asked = use(TOOL, order_id="A1", amount=400, currency="EUR")
    async with ScriptedClaude([asked, text("Refund issued.")]) as model:
        gate, work = await _session(bot, model, claude_env, "cas-edit")
        async with gate, running(bot, work) as run:
            req = await eventually(lambda: pending(bot), timeout_s=RUN_S)
            ch, ts = await bot.message_of(req.id)
            await bot.emu.click("UALICE", render.ACTION_EDIT, channel=ch, ts=ts)

            def opened() -> Any:
                view = bot.emu.open_view("UALICE")
                return view if view and view.definition["callback_id"] == render.VIEW_EDIT else None

            view = await eventually(opened, what="the edit modal")
            edited = {"order_id": "A1", "amount": 40, "currency": "EUR"}
            fields = {render.ARGS_BLOCK: {render.ARGS_ACTION: json.dumps(edited)}}
            assert (await bot.emu.submit("UALICE", view.id, fields)).view_action != "errors"
            assert await asyncio.wait_for(run, RUN_S) == "Refund issued."
    assert refunds.issued == [("A1", 40, "EUR")]  # not the 400 the model asked for
    assert model.tool_results() == [RECEIPT]


async def test_rejected_call_never_runs_and_the_model_reads_why(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    why = "A1 was never shipped; the customer means A2"
    async with ScriptedClaude([REFUND, text("I did not refund A1.")]) as model:
        gate, work = await _session(bot, model, claude_env, "cas-reject")
        async with gate, running(bot, work) as run:
            req = await reject(bot, "wrong_target", why)
            assert await asyncio.wait_for(run, RUN_S) == "I did not refund A1."
    assert refunds.issued == []
    [told] = model.tool_results()
    assert f"{TOOL} was rejected by UALICE (wrong_target)" in told and why in told, told
    assert (await bot.requests.get(req.id)).state == State.CANCELLED


async def test_nobody_deciding_in_time_denies_and_the_model_is_told(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    async with ScriptedClaude([REFUND, text("Nobody approved it.")]) as model:
        gate, work = await _session(bot, model, claude_env, "cas-timeout", timeout=2)
        async with gate, running(bot, work) as run:
            assert await asyncio.wait_for(run, RUN_S) == "Nobody approved it."
    assert refunds.issued == []
    [told] = model.tool_results()
    assert "no decision" in told.lower() or "in time" in told, told


async def _threaded(bot: Bot, run_id: str) -> Run | None:
    run = await bot.runs.get(run_id)
    return run if run.channel and run.thread_ts else None


async def test_a_correction_in_the_sessions_thread_reaches_the_model(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    words = "Refund order A2 instead"
    async with ScriptedClaude([REFUND, text("Refunding A2 instead.")]) as model:
        gate, work = await _session(bot, model, claude_env, "cas-steer")
        async with gate, running(bot, work) as run:
            await eventually(lambda: pending(bot), timeout_s=RUN_S)
            # The notifier posts the session's thread on its own: a person replies once
            # it is there (the call may be pending in the store a moment before).
            session = await eventually(lambda: _threaded(bot, "cas-steer"), timeout_s=RUN_S)
            await bot.emu.post("UALICE", session.channel, words, thread_ts=session.thread_ts)
            assert await asyncio.wait_for(run, RUN_S) == "Refunding A2 instead."
    assert refunds.issued == []
    [told] = model.tool_results()
    assert words in told, told


async def test_a_stop_ends_the_session_and_nothing_runs(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    async with ScriptedClaude([REFUND, text("(never said)")]) as model:
        gate, work = await _session(bot, model, claude_env, "cas-stop")
        async with gate, running(bot, work) as run:
            req = await eventually(lambda: pending(bot), timeout_s=RUN_S)
            out = await bot.emu.command("UALICE", "#hitl-approvals", "/hitl", "stop cas-stop")
            assert out.status == 200
            assert await asyncio.wait_for(run, RUN_S) != "(never said)"
    assert refunds.issued == []
    assert model.played == 1  # interrupted: the model was not asked again
    assert (await bot.requests.get(req.id)).state == State.CANCELLED


async def test_a_wrong_token_runs_nothing_and_the_model_reads_the_fix(
    bot: Bot, claude_env: dict[str, str], refunds: Refunds, monkeypatch: pytest.MonkeyPatch
) -> None:
    refunds.watch(monkeypatch, recipe)
    async with ScriptedClaude([REFUND, text("I could not refund A1.")]) as model:
        env = claude_env | {"ANTHROPIC_BASE_URL": model.base_url}
        async with Gate(api_url=bot.url, api_token="not-the-token") as gate:
            work = recipe.run(PROMPT, gate, run_id="cas-token", env=env)
            assert await asyncio.wait_for(work, RUN_S) == "I could not refund A1."
    # the SDK turns the callback's error into a denial: nothing ran, the fix was told
    assert refunds.issued == []
    [told] = model.tool_results()
    assert "refused the token" in told and "HITL_API_TOKEN" in told, told
    assert await bot.requests.list_pending() == []


async def test_the_script_refunds_after_a_click_in_slack(
    bot: Bot, claude_env: dict[str, str]
) -> None:
    async with ScriptedClaude([REFUND, text("Refund issued.")]) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HITL_", "ANTHROPIC_"))}
        env.pop("REDIS_URL", None)  # over HTTP only, as the docstring says
        env |= claude_env | {
            "ANTHROPIC_BASE_URL": model.base_url,
            "HITL_API_URL": bot.url,
            "HITL_API_TOKEN": API_TOKEN,
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(recipe.__file__)),
            PROMPT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            req = await approve(bot)
            out, err = await asyncio.wait_for(proc.communicate(), RUN_S)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.communicate()
    assert proc.returncode == 0, err.decode()[-2000:]
    assert out.decode().strip() == "Refund issued."
    assert (await bot.requests.get(req.id)).state == State.COMPLETED
