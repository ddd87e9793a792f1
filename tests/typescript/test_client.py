"""The TypeScript client as a user installs it (`npm pack`, then `npm install` of the
tarball), driving the real bot over its HTTP API while people act in the Slack emulator:
an approval clicked, a rejection with its reason, a deadline, a question answered, a
correction at the tool boundary, a stop. And its types hold a user's code to the API.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.states import State
from bot.slack.blocks import render
from bot.slack.blocks.options import ACTION_OPTION
from tests.e2e.conftest import Bot, all_text
from tests.support.poll import eventually
from tests.typescript.steps import STEP_S, Agent, pending

pytestmark = pytest.mark.timeout(300)  # the first test packs and installs the client

HERE = Path(__file__).parent
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN
AUTH = {"Authorization": f"Bearer {API_TOKEN}"}
RUN = "ts-agent:ticket-7"


async def test_an_agent_on_the_packed_client_through_people_in_slack(
    bot: Bot, ts_project: Path
) -> None:
    (ts_project / "agent.mjs").write_text((HERE / "agent.mjs").read_text())
    env = os.environ | {
        "HITL_API_URL": bot.url,
        "HITL_API_TOKEN": API_TOKEN,
        "RUN_ID": RUN,
        "TRACEPARENT": TRACEPARENT,  # a traced parent process hands its children its span
    }
    proc = await asyncio.create_subprocess_exec(
        "node",
        "agent.mjs",
        cwd=ts_project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    agent = Agent(proc)
    try:
        # 1. requireApproval files the exact call; a person approves; it runs and reports
        req = await pending(bot, "refund", "A1")
        assert req.args == {"order": "A1", "amount": 5}
        ch, ts = await bot.message_of(req.id)
        await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=ts)
        assert (await agent.step("approve"))["result"] == "refunded A1"
        done = await bot.requests.get(req.id)
        assert done.state == State.COMPLETED
        # the agent's span is the parent of the request's (docs/tracing.md)
        assert (await bot.requests.fields(req.id))["trace"] == TRACEPARENT

        # 2. a rejection with the person's reason: a typed error carrying it
        req = await pending(bot, "refund", "A2")
        ch, ts = await bot.message_of(req.id)
        await bot.emu.post("UPARENT", ch, "reject: wrong order, A1 was refunded", thread_ts=ts)
        err = (await agent.step("reject"))["error"]
        assert err["name"] == "Rejected" and "Rejected" in err["kinds"]
        assert (err["text"], err["actor"]) == ("wrong order, A1 was refunded", "UPARENT")

        # 3. its own deadline passed: withdrawn, TimedOut (a Rejected)
        err = (await agent.step("timeout"))["error"]
        assert err["name"] == "TimedOut" and "Rejected" in err["kinds"]
        assert err["reasonCode"] == "caller_timeout"
        assert (await bot.requests.get(err["request"])).state == State.CANCELLED

        # 4. a question with options, answered by a click
        def asked() -> Any:
            cards = bot.emu.messages("#hitl-approvals")
            return next((m for m in cards if "Which order?" in all_text(m.blocks)), None)

        card = await eventually(asked, what="the question's card")
        await bot.emu.click("UALICE", f"{ACTION_OPTION}_1", channel=card.channel, ts=card.ts)
        assert (await agent.step("ask"))["result"] == "A2"

        # 5. at the tool boundary: clear, then a queued correction is the tool's result
        assert (await agent.step("clear"))["result"] == "looked up A1"
        async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
            said = await api.post(f"/v1/runs/{RUN}/steer", json={"text": "Look up A9 instead"})
            assert said.status_code == 201, said.text
        await agent.go_on()
        got = await agent.step("steered")
        assert got["result"] == "Cancelled. The person says: Look up A9 instead"
        assert (await agent.step("after"))["result"] == "looked up A3"  # read once

        # 6. a stop while a gated call of the run waits: RunStopped, and the run aborts
        req = await pending(bot, "refund", "A4")
        out = await bot.emu.command("UPARENT", "#hitl-approvals", "/hitl", f"stop {RUN}")
        assert out.status == 200
        err = (await agent.step("stop"))["error"]
        assert err["name"] == "RunStopped" and "Cancelled" in err["kinds"]
        assert (await bot.requests.get(req.id)).state == State.CANCELLED
        err = (await agent.step("aborted"))["error"]
        assert err["name"] == "RunStopped", err
        assert (await agent.step("signal"))["result"] is True
        assert await asyncio.wait_for(proc.wait(), STEP_S) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


GOOD = """
import { Hitl, Rejected, type ApprovalRequest } from "@hitl-bot/client";
const hitl = new Hitl({ url: "http://127.0.0.1:3000", token: "t" });
export async function refund(order: string): Promise<string> {
  try {
    const a = await hitl.approve({ tool: "refund", args: { order }, runId: "r1" });
    const done: ApprovalRequest = await a.report({ ok: true, detail: "ok" });
    return done.state;
  } catch (err) {
    if (err instanceof Rejected) return `${err.reasonCode}: ${err.text ?? ""}`;
    throw err;
  }
}
export const answer: Promise<string> = hitl.ask("Which?", { options: ["A", "B"] });
"""

BAD = """
import { Hitl } from "@hitl-bot/client";
const hitl = new Hitl({ url: "http://127.0.0.1:3000", token: "t" });
export const a = hitl.approve({ tool: "refund", args: { order: () => 1 } });
"""


def test_the_shipped_types_check_a_users_code(ts_project: Path) -> None:
    def check(source: str) -> subprocess.CompletedProcess[str]:
        (ts_project / "user.ts").write_text(source)
        argv = ["node", "tsc", "--noEmit", "--strict", "--module", "nodenext"]
        argv += ["--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom"]
        return subprocess.run(
            [*argv, "user.ts"], cwd=ts_project, capture_output=True, text=True, timeout=120
        )

    good = check(GOOD)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = check(BAD)  # a function is no JSON argument a person could review
    assert bad.returncode != 0 and "user.ts" in bad.stdout, bad.stdout
