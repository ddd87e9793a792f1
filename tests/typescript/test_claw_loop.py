"""The mission's from-scratch TypeScript loop (the claw machine), with its approve, answer
and queued correction wired to hitl-bot in a few marked lines (tests/typescript/claw_loop.mts,
shown in docs/typescript.md), compiled with the pinned tsc and run against the scripted
claw model and a real serve, while people act in the Slack emulator: a move runs free, a
correction in Slack ("the penguin!") steers the next call, the drop waits for a click, a
question waits for Tina's answer, and a rejection's words reach the model."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.models import ActionRequest
from bot.core.states import Event, State
from bot.demo.claw_script import claw_responder
from bot.sandbox.model import ScriptedModel
from bot.slack.blocks import render
from tests.e2e.conftest import POLICY, Bot, all_text
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(300)
HERE = Path(__file__).parent
API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN
STEP_S = 60.0


@pytest.fixture
def serve_env(tmp_path: Path) -> dict[str, Any]:
    """Tina (UKID) is an operator of this bot: she may answer and steer the agent's run."""
    policy = tmp_path / "claw-policy.yaml"
    policy.write_text(yaml.safe_dump({**POLICY, "operators": ["UKID"]}))
    return {"hitl_policy": policy}


@pytest.fixture(scope="module")
def claw_js(ts_project: Path) -> Path:
    """The loop, compiled by the pinned tsc as a user's project would."""
    (ts_project / "claw_loop.mts").write_text((HERE / "claw_loop.mts").read_text())
    argv = ["node", "tsc", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"]
    argv += ["--target", "es2022", "--lib", "es2022,dom", "claw_loop.mts"]
    done = subprocess.run(argv, cwd=ts_project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr  # it type-checks as it is shown
    return ts_project / "claw_loop.mjs"


class Loop:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def next(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), STEP_S)
        if not line:
            err = await self.proc.stderr.read() if self.proc.stderr else b""
            pytest.fail(f"the loop ended: {err.decode()[-3000:]}")
        got: dict[str, Any] = json.loads(line)
        return got

    async def until(self, step: str, name: str | None = None) -> dict[str, Any]:
        while True:
            got = await self.next()
            if got["step"] == step and (name is None or got.get("name") == name):
                return got

    async def go_on(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        await self.proc.stdin.drain()


async def _start(claw_js: Path, bot: Bot, model: str, run: str, prompt: str) -> Loop:
    env = os.environ | {
        "HITL_API_URL": bot.url,
        "HITL_API_TOKEN": API_TOKEN,
        "LLM_URL": model,
        "RUN_ID": run,
        "PROMPT": prompt,
    }
    proc = await asyncio.create_subprocess_exec(
        "node",
        str(claw_js),
        cwd=claw_js.parent,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return Loop(proc)


async def _drop_waiting(bot: Bot, run: str) -> ActionRequest:
    async def found() -> ActionRequest | None:
        reqs = await bot.requests.list_pending()
        return next((r for r in reqs if r.tool == "drop_claw" and r.run_id == run), None)

    return await eventually(found, what="the drop waiting for a person", timeout_s=STEP_S)


async def test_a_correction_steers_and_the_drop_waits_for_a_click(claw_js: Path, bot: Bot) -> None:
    run = f"claw-{uuid.uuid4().hex[:8]}"
    async with ScriptedModel(claw_responder) as model:
        loop = await _start(claw_js, bot, model.base_url, run, "Get me the bear!")
        try:
            await loop.until("moved")  # the first move, toward the bear, runs free
            out = await bot.emu.command(
                "UKID", "#hitl-approvals", "/hitl", f"steer {run} No, wait! The penguin!"
            )
            assert out.status == 200
            await loop.go_on()
            assert (await loop.until("tool", "move_claw"))["output"].startswith("Moved left 10 cm")
            steered = await loop.until("tool", "move_claw")
            assert steered["output"] == "Cancelled. The person says: No, wait! The penguin!"
            req = await _drop_waiting(bot, run)
            assert req.args == {"target": "penguin"}  # the exact call, as the model sent it
            ch, ts = await bot.message_of(req.id)
            await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=ts)
            assert (await loop.until("tool", "drop_claw"))["output"] == "Grabbed the penguin!"
            assert (await loop.until("done"))["output"] == "Got it! Here is your penguin."
            assert (await bot.requests.get(req.id)).state == State.COMPLETED
        finally:
            if loop.proc.returncode is None:
                loop.proc.kill()
                await loop.proc.wait()


async def test_a_question_waits_for_tinas_answer_and_a_no_keeps_the_coin(
    claw_js: Path, bot: Bot
) -> None:
    run = f"claw-{uuid.uuid4().hex[:8]}"
    async with ScriptedModel(claw_responder) as model:
        loop = await _start(claw_js, bot, model.base_url, run, "Get me a prize!")
        try:

            def asked() -> Any:
                tops = bot.emu.messages("#hitl-approvals")
                return next(
                    (m for m in tops if "Which prize do you want?" in all_text(m.blocks)), None
                )

            card = await eventually(asked, what="the question's card", timeout_s=STEP_S)
            await bot.emu.post("UKID", card.channel, "the duck", thread_ts=card.ts)
            assert (await loop.until("tool", "ask_kid"))["output"] == "the duck"
            await loop.until("moved")
            await loop.go_on()
            req = await _drop_waiting(bot, run)
            assert req.args == {"target": "duck"}
            ch, ts = await bot.message_of(req.id)
            await bot.emu.post("UPARENT", ch, "reject: no more coins today", thread_ts=ts)
            said = (await loop.until("tool", "drop_claw"))["output"]
            assert said == "Tina said no. Ask her what to do."
            assert "did not drop the claw" in (await loop.until("done"))["output"]
            done = await bot.requests.get(req.id)  # a rejection closes to cancelled at once
            assert done.state == State.CANCELLED and done.resolution is not None
            assert (done.resolution.event, done.resolution.text) == (
                Event.REJECT,
                "no more coins today",
            )
        finally:
            if loop.proc.returncode is None:
                loop.proc.kill()
                await loop.proc.wait()
