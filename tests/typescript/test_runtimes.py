"""The adapters for the agent frameworks, each driving the real framework from the npm
registry (pinned in tests/typescript/runtimes) with the scripted model as its LLM,
while people act in the Slack emulator: a call approved runs and its result reaches
the model; a rejection's reason is what the model reads; a deadline that passes denies
the call (the safe default); a stop ends the agent.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.core.states import State
from bot.sandbox.model import Expect, ScriptedModel, after_tool, call, say
from bot.slack import render
from tests.e2e.conftest import Bot
from tests.typescript.steps import STEP_S, Agent, pending

pytestmark = pytest.mark.timeout(300)  # the first test installs the frameworks

HERE = Path(__file__).parent
API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN
REASON = "wrong order, A1 was refunded"

# The model asks for a refund, then answers from what the tool's result told it.
SCRIPT = [
    call("refund", order="A1", amount=5, expect=Expect(role="user", contains="A1")),
    say("Refunded A1.", expect=after_tool("refunded A1")),
    call("refund", order="A2", amount=7, expect=Expect(role="user", contains="A2")),
    say("I did not refund A2.", expect=after_tool(REASON)),
    call("refund", order="A3", amount=1, expect=Expect(role="user", contains="A3")),
    say("Nobody approved A3 in time.", expect=after_tool("no decision within 1 s")),
    call("refund", order="A4", amount=3, expect=Expect(role="user", contains="A4")),
]


def _tool_results(model: ScriptedModel) -> list[str]:
    return [
        str(m.get("content"))
        for body in model.requests
        for m in (body.get("messages") or [])[-1:]
        if m.get("role") == "tool"
    ]


@pytest.mark.parametrize("script", ["ai_agent.mjs", "agents_agent.mjs"])
async def test_a_framework_agent_decided_by_people_in_slack(
    bot: Bot, runtimes_project: Path, script: str
) -> None:
    run_id = f"{script.split('_')[0]}:refunds"
    (runtimes_project / script).write_text((HERE / script).read_text())
    async with ScriptedModel(SCRIPT) as model:
        env = os.environ | {
            "HITL_API_URL": bot.url,
            "HITL_API_TOKEN": API_TOKEN,
            "RUN_ID": run_id,
            "MODEL_URL": model.base_url,
        }
        proc = await asyncio.create_subprocess_exec(
            "node",
            script,
            cwd=runtimes_project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        agent = Agent(proc)
        try:
            await _converse(bot, agent, model, run_id)
            assert await asyncio.wait_for(proc.wait(), STEP_S) == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def _converse(bot: Bot, agent: Agent, model: ScriptedModel, run_id: str) -> None:
    # 1. the framework paused the call; it is filed exactly; a click lets it run once
    req = await pending(bot, "refund", "A1")
    assert (req.args, req.run_id) == ({"order": "A1", "amount": 5}, run_id)
    ch, ts = await bot.message_of(req.id)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=ts)
    got: dict[str, Any] = await agent.step("approve")
    assert (got["text"], got["ran"]) == ("Refunded A1.", [{"order": "A1", "amount": 5}])
    assert (await bot.requests.get(req.id)).state == State.COMPLETED  # claimed, reported

    # 2. rejected with a reason: the tool does not run, and the model reads the reason
    req = await pending(bot, "refund", "A2")
    ch, ts = await bot.message_of(req.id)
    await bot.emu.post("UPARENT", ch, f"reject: {REASON}", thread_ts=ts)
    got = await agent.step("reject")
    assert got["text"] == "I did not refund A2." and len(got["ran"]) == 1
    assert REASON in _tool_results(model)[-1]
    assert (await bot.requests.get(req.id)).state == State.CANCELLED

    # 3. nobody decides within the agent's deadline: withdrawn, denied, the model told
    req = await pending(bot, "refund", "A3")
    got = await agent.step("timeout")
    assert got["text"] == "Nobody approved A3 in time." and len(got["ran"]) == 1
    assert "no decision within 1 s" in _tool_results(model)[-1]
    assert (await bot.requests.get(req.id)).state == State.CANCELLED

    # 4. a person stops the run while its call waits: the agent ends, nothing ran
    req = await pending(bot, "refund", "A4")
    out = await bot.emu.command("UPARENT", "#hitl-approvals", "/hitl", f"stop {run_id}")
    assert out.status == 200
    got = await agent.step("stop")
    assert got["error"]["name"] == "RunStopped" and len(got["ran"]) == 1
    assert (await bot.requests.get(req.id)).state == State.CANCELLED
