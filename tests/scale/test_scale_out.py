"""Two `serve` and two `worker` processes on one Valkey: 200 runs, each approval
decided exactly once, every message posted once, nothing left pending."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.core.states import FINAL
from bot.sandbox.model import Turn, call, say
from bot.sandbox.slack import SlackEmulator
from bot.slack.blocks import render
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.poll import eventually

RUNS = 200
SECRET, TOKEN, API = "scale-secret", "xoxb-scale", "scale-api-token-0123"
AGENT = "tests.agent.fixtures:counting_agent"


def responder(messages: Sequence[dict[str, Any]]) -> Turn:
    last = messages[-1]
    if last.get("role") == "tool":
        return say(f"done: {last.get('content')}")
    amount = int(re.findall(r"\d+", str(last.get("content")))[-1])
    return call("charge", amount=amount)


async def _spawn(args: list[str], env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    with log.open("wb") as out:  # the child keeps its own copy of the descriptor
        return await asyncio.create_subprocess_exec(
            sys.executable, *args, env=env, stdout=out, stderr=asyncio.subprocess.STDOUT
        )


async def _stop_all(procs: Sequence[asyncio.subprocess.Process], grace_s: float = 20) -> None:
    """SIGTERM every process still running, then wait for each; kill one that outlasts
    `grace_s`."""
    for p in procs:
        if p.returncode is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            await asyncio.wait_for(p.wait(), grace_s)
        except TimeoutError:
            p.kill()
            await p.wait()


SERVE_START_S = 60  # a serve process imports everything and may start its own Valkey


async def _url_of(log: Path, timeout_s: float = SERVE_START_S) -> str:
    """The address a serve process prints once it listens."""

    def served() -> str | None:
        found = re.search(r"serving on (http://[0-9.:]+)", log.read_text(errors="replace"))
        return found.group(1) if found else None

    try:
        return await eventually(served, what="serving on", timeout_s=timeout_s, interval_s=0.1)
    except AssertionError:
        raise AssertionError(
            f"serve did not start: {log.read_text(errors='replace')[-2000:]}"
        ) from None


@pytest.fixture
async def cluster(redis_url: str, redis: Redis, tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    # `redis` first: it flushes the database, which must happen before the processes start.
    from bot.sandbox.model import ScriptedModel

    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    model = ScriptedModel(responder)
    model_url = await model.start()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "SLACK_API_URL": emu.api_url,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "HITL_API_TOKEN": API,
        "HITL_PORT": "0",
        "OPENAI_BASE_URL": model_url,
        "HITL_MODEL": "scripted",
        "HITL_TEST_COUNT_FILE": str(tmp_path / "charges.txt"),
    }
    env.pop("SLACK_APP_TOKEN", None)
    procs = []
    for i in range(2):
        procs.append(await _spawn(["-m", "bot", "serve"], env, tmp_path / f"serve{i}.log"))
    for i in range(2):
        procs.append(
            await _spawn(
                [
                    "-m",
                    "bot.agent.worker",
                    "--agent",
                    AGENT,
                    "--min-idle",
                    "5s",
                    "--consumer",
                    f"w{i}",
                ],
                env,
                tmp_path / f"worker{i}.log",
            )
        )
    try:
        urls = [await _url_of(tmp_path / f"serve{i}.log") for i in range(2)]
        yield {"emu": emu, "urls": urls, "model": model, "tmp": tmp_path}
    finally:
        await _stop_all(procs)
        await model.stop()
        await emu.stop()


def _approval_messages(emu: SlackEmulator) -> dict[str, tuple[str, str]]:
    """request id -> (channel, ts) of every approval message with buttons showing."""
    found = {}
    for ch in emu.state()["channels"]:
        for top in ch["messages"]:
            for m in [top, *top.get("replies", [])]:
                for b in m.get("blocks") or []:
                    for el in b.get("elements", []) if b.get("type") == "actions" else []:
                        if el.get("action_id") == render.ACTION_APPROVE:
                            rid, _ = render.ButtonValue.decode(el["value"])
                            found[rid] = (ch["id"], m["ts"])
    return found


@pytest.mark.timeout(300)
async def test_two_serves_two_workers_two_hundred_runs(
    cluster: dict[str, Any], redis: Redis
) -> None:
    emu: SlackEmulator = cluster["emu"]
    urls: list[str] = cluster["urls"]
    headers = {"Authorization": f"Bearer {API}"}
    async with httpx.AsyncClient(timeout=30) as http:
        starts = await asyncio.gather(
            *(
                http.post(
                    f"{urls[i % 2]}/v1/runs",
                    headers=headers,
                    json={
                        "agent": "counting",
                        "prompt": f"charge {i + 1}",
                        "channel": "#hitl-approvals",
                    },
                )
                for i in range(RUNS)
            )
        )
    assert all(r.status_code == 201 for r in starts), [r.text for r in starts[:3]]
    run_ids = [r.json()["run_id"] for r in starts]

    decided: set[str] = set()

    def undecided() -> dict[str, tuple[str, str]]:
        return {rid: where for rid, where in _approval_messages(emu).items() if rid not in decided}

    deadline = time.monotonic() + 150
    while len(decided) < RUNS:
        todo = await eventually(
            undecided,
            what=f"approval messages past the {len(decided)} decided",
            timeout_s=deadline - time.monotonic(),
            interval_s=0.2,
        )
        # Every message is clicked twice, once through each serve process: the
        # second click must learn the first one won.
        for url in urls:
            emu.events_url = url + "/slack/events"
            await asyncio.gather(
                *(
                    emu.click(
                        "UALICE" if url == urls[0] else "UBOB",
                        render.ACTION_APPROVE,
                        channel=ch,
                        ts=ts,
                    )
                    for ch, ts in todo.values()
                ),
                return_exceptions=True,
            )
        decided |= set(todo)
    assert len(decided) == RUNS

    async with httpx.AsyncClient(timeout=30) as http:

        async def finished() -> bool:
            states = await asyncio.gather(
                *(http.get(f"{urls[0]}/v1/runs/{rid}", headers=headers) for rid in run_ids)
            )
            return all(s.json()["state"] == "finished" for s in states)

        await eventually(finished, what="every run finished", timeout_s=60, interval_s=0.5)

    store = RequestStore(redis)
    assert await store.list_pending() == []
    charges = (cluster["tmp"] / "charges.txt").read_text().splitlines()
    assert len(charges) == RUNS and len({c.split()[0] for c in charges}) == RUNS
    for rid in decided:
        req = await store.get(rid)
        assert req.state in FINAL and req.state.value == "completed"
        trail = await audit.entries(redis, rid)
        moves = Counter(e.event for e in trail if e.kind == "transition")
        assert moves["approve"] == 1 and moves["claim"] == 1 and moves["succeed"] == 1
    # Two notifiers share one consumer group: each card was posted exactly once.
    texts = [
        str(m.get("blocks") or "")
        for ch in emu.state()["channels"]
        for top in ch["messages"]
        for m in [top, *top.get("replies", [])]
    ]
    for rid in decided:
        short = (await store.get(rid)).payload_hash[:12]
        assert sum(short in t for t in texts) == 1, rid
