"""The adapters for the agent frameworks, each driving the real framework from the npm
registry (pinned in tests/typescript/runtimes) with the scripted model as its LLM,
while people act in the Slack emulator: a call approved runs and its result reaches
the model; an edit runs the arguments the person approved; a rejection's reason is what
the model reads; a correction in the run's thread withdraws the call and the model reads
it; a deadline that passes denies the call (the safe default); a stop ends the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.core.states import State
from bot.sandbox.anthropic import ScriptedClaude, text, use
from bot.sandbox.model import Expect, ScriptedModel, after_tool, call, say
from bot.slack.blocks import render
from tests.e2e.conftest import Bot
from tests.support.poll import eventually
from tests.typescript.steps import STEP_S, Agent, pending

pytestmark = pytest.mark.timeout(300)  # the first test installs the frameworks

HERE = Path(__file__).parent
DOCS = HERE.parents[1] / "docs" / "runtimes"
API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN
REASON = "wrong order, A1 was refunded"
CORRECTION = "Refund order A9 instead"

# The model asks for a refund, then answers from what the tool's result told it.
SCRIPT = [
    call("refund", order="A1", amount=5, expect=Expect(role="user", contains="A1")),
    say("Refunded A1.", expect=after_tool("refunded A1")),
    call("refund", order="A2", amount=500, expect=Expect(role="user", contains="A2")),
    say("Refunded A2.", expect=after_tool("refunded A2")),
    call("refund", order="A3", amount=7, expect=Expect(role="user", contains="A3")),
    say("I did not refund A3.", expect=after_tool(REASON)),
    call("refund", order="A4", amount=2, expect=Expect(role="user", contains="A4")),
    say("Refunding A9 instead.", expect=after_tool(CORRECTION)),
    call("refund", order="A5", amount=1, expect=Expect(role="user", contains="A5")),
    say("Nobody approved A5 in time.", expect=after_tool("no decision within 1 s")),
    call("refund", order="A6", amount=3, expect=Expect(role="user", contains="A6")),
]


def _tool_results(model: ScriptedModel) -> list[str]:
    return [
        str(m.get("content"))
        for body in model.requests
        for m in (body.get("messages") or [])[-1:]
        if m.get("role") == "tool"
    ]


# The same six conversations on the Claude Agent SDK: Claude Code calls the in-process
# server's tool by its own name for it; what it was told is checked by the test.
CLAUDE_TOOL = "mcp__shop__refund"
CLAUDE_STEPS = [
    use(CLAUDE_TOOL, order="A1", amount=5),
    text("Refunded A1."),
    use(CLAUDE_TOOL, order="A2", amount=500),
    text("Refunded A2."),
    use(CLAUDE_TOOL, order="A3", amount=7),
    text("I did not refund A3."),
    use(CLAUDE_TOOL, order="A4", amount=2),
    text("Refunding A9 instead."),
    use(CLAUDE_TOOL, order="A5", amount=1),
    text("Nobody approved A5 in time."),
    use(CLAUDE_TOOL, order="A6", amount=3),
]


@contextlib.asynccontextmanager
async def _agent(
    bot: Bot, project: Path, script: str, run_id: str, env: dict[str, str]
) -> AsyncIterator[Agent]:
    for name in (script, "sessions.mjs"):  # the agent, and the sessions every agent runs
        (project / name).write_text((HERE / name).read_text())
    env = os.environ | env | {"HITL_API_URL": bot.url, "HITL_API_TOKEN": API_TOKEN}
    proc = await asyncio.create_subprocess_exec(
        "node",
        script,
        cwd=project,
        env=env | {"RUN_ID": run_id},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield Agent(proc)
        assert await asyncio.wait_for(proc.wait(), STEP_S) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("script", ["ai_agent.mjs", "agents_agent.mjs"])
async def test_a_framework_agent_decided_by_people_in_slack(
    bot: Bot, runtimes_project: Path, script: str
) -> None:
    run_id = f"{script.split('_')[0]}:refunds"
    async with (
        ScriptedModel(SCRIPT) as model,
        _agent(bot, runtimes_project, script, run_id, {"MODEL_URL": model.base_url}) as agent,
    ):
        await _converse(bot, agent, lambda: _tool_results(model)[-1], run_id, "refund")


async def test_a_claude_agent_sdk_agent_decided_by_people_in_slack(
    bot: Bot, runtimes_project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    async with ScriptedClaude(CLAUDE_STEPS) as model:
        env = {
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "HOME": str(home),
        }
        run_id = "claude:refunds"
        async with _agent(bot, runtimes_project, "claude_agent.mjs", run_id, env) as agent:
            await _converse(bot, agent, lambda: model.tool_results()[-1], run_id, CLAUDE_TOOL)
        assert model.played == 11  # interrupted by the stop: the model was not asked again


async def _converse(
    bot: Bot, agent: Agent, told: Callable[[], str], run_id: str, tool: str
) -> None:
    # 1. the framework paused the call; it is filed exactly; a click lets it run once
    req = await pending(bot, tool, "A1")
    assert (req.args, req.run_id) == ({"order": "A1", "amount": 5}, run_id)
    ch, ts = await bot.message_of(req.id)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=ts)
    got: dict[str, Any] = await agent.step("approve")
    assert (got["text"], got["ran"]) == ("Refunded A1.", [{"order": "A1", "amount": 5}])
    assert "refunded A1" in told()
    assert (await bot.requests.get(req.id)).state == State.COMPLETED  # claimed, reported

    # 2. a person edits the amount and approves: what runs is what they approved
    req = await pending(bot, tool, "A2")
    await _edit(bot, req.id, {"order": "A2", "amount": 50})
    got = await agent.step("edit")
    assert got["text"] == "Refunded A2." and got["ran"][-1] == {"order": "A2", "amount": 50}
    done = await bot.requests.get(req.id)
    assert (done.state, done.args["amount"]) == (State.COMPLETED, 50)

    # 3. rejected with a reason: the tool does not run, and the model reads the reason
    req = await pending(bot, tool, "A3")
    ch, ts = await bot.message_of(req.id)
    await bot.emu.post("UPARENT", ch, f"reject: {REASON}", thread_ts=ts)
    got = await agent.step("reject")
    assert got["text"] == "I did not refund A3." and len(got["ran"]) == 2
    said = told()
    assert said.startswith(f"{tool} was rejected by UPARENT") and REASON in said, said
    assert (await bot.requests.get(req.id)).state == State.CANCELLED

    # 4. a correction in the run's thread withdraws the waiting call; the model reads it
    req = await pending(bot, tool, "A4")
    run = await bot.runs.get(run_id)
    assert run.channel and run.thread_ts
    await bot.emu.post("UPARENT", run.channel, CORRECTION, thread_ts=run.thread_ts)
    got = await agent.step("steer")
    assert got["text"] == "Refunding A9 instead." and len(got["ran"]) == 2
    assert f"The person says: {CORRECTION}" in told()
    assert (await bot.requests.get(req.id)).state == State.CANCELLED

    # 5. nobody decides within the agent's deadline: withdrawn, denied, the model told
    req = await pending(bot, tool, "A5")
    got = await agent.step("timeout")
    assert got["text"] == "Nobody approved A5 in time." and len(got["ran"]) == 2
    assert "no decision within 1 s" in told()
    assert (await bot.requests.get(req.id)).state == State.CANCELLED

    # 6. a person stops the run while its call waits: the agent ends, nothing ran
    req = await pending(bot, tool, "A6")
    out = await bot.emu.command("UPARENT", "#hitl-approvals", "/hitl", f"stop {run_id}")
    assert out.status == 200
    got = await agent.step("stop")
    assert got["error"]["name"] == "RunStopped" and len(got["ran"]) == 2
    assert (await bot.requests.get(req.id)).state == State.CANCELLED


async def _edit(bot: Bot, rid: str, args: dict[str, Any]) -> None:
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UPARENT", render.ACTION_EDIT, channel=ch, ts=ts)

    def opened() -> Any:
        view = bot.emu.open_view("UPARENT")
        return view if view and view.definition["callback_id"] == render.VIEW_EDIT else None

    view = await eventually(opened, what="the edit modal")
    fields = {render.ARGS_BLOCK: {render.ARGS_ACTION: json.dumps(args)}}
    out = await bot.emu.submit("UPARENT", view.id, fields)
    assert out.view_action != "errors", out


def _tsc(project: Path, *files: str) -> subprocess.CompletedProcess[str]:
    argv = ["node", "tsc", "--noEmit", "--strict", "--module", "nodenext", "--skipLibCheck"]
    argv += ["--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom"]
    return subprocess.run([*argv, *files], cwd=project, capture_output=True, text=True, timeout=120)


def test_the_adapters_types_fit_the_frameworks_own(runtimes_project: Path) -> None:
    good = (HERE / "typed_agents.ts").read_text()

    def check(source: str) -> subprocess.CompletedProcess[str]:
        (runtimes_project / "user.ts").write_text(source)
        return _tsc(runtimes_project, "user.ts")

    fits = check(good)
    assert fits.returncode == 0, fits.stdout + fits.stderr
    # the whole result where its content is meant, the state where the result is meant
    bad = good.replace("ai.respond(result.content)", "ai.respond(result)")
    bad = bad.replace("agents.decide(result)", "agents.decide(result.state)")
    refused = check(bad)
    assert refused.returncode != 0, refused.stdout
    assert "user.ts(24," in refused.stdout and "user.ts(42," in refused.stdout, refused.stdout


# What the pages' snippets leave to the reader: the payment call, the model, the prompt.
PRELUDE = """declare const payments: { refund(order: string, amount: number): Promise<string> };
declare const model: import("ai").LanguageModel;
declare const prompt: string;
declare function confirm(question: string): Promise<boolean>;
"""
SNIPPET = re.compile(r"```ts\n(.*?)```", re.S)


def test_every_runtime_pages_code_type_checks(runtimes_project: Path) -> None:
    files = []
    for doc in sorted(DOCS.glob("*.md")):
        for n, code in enumerate(SNIPPET.findall(doc.read_text())):
            name = f"doc_{doc.stem.replace('-', '_')}_{n}.ts"
            (runtimes_project / name).write_text(PRELUDE + code)
            files.append(name)
    assert len(files) >= 4, files  # each page: the framework's own example, then ours
    checked = _tsc(runtimes_project, *files)
    assert checked.returncode == 0, checked.stdout + checked.stderr
