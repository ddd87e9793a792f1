"""The embedded Valkey is supervised, seen from real processes: two `serve` and one `worker`
sharing a data dir (no REDIS_URL). A `kill -9` of Valkey is repaired with nobody acting and
nothing lost; SIGTERM of the serve that started it leaves the others working; the last
process out stops it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from bot.sandbox.model import ScriptedModel
from bot.sandbox.slack import SlackEmulator
from bot.slack.blocks import render

# the demo's short /tmp data dir (a Valkey socket path must fit in 107 bytes), killed if left
from tests.demo.test_demo_process import data_dir, valkeys  # noqa: F401
from tests.scale.test_scale_out import _approval_messages, _url_of, responder
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
SECRET, TOKEN, API = "sup-secret", "xoxb-sup", "sup-api-token-0123"
HEADERS = {"Authorization": f"Bearer {API}"}
AGENT = "tests.agent.fixtures:counting_agent"
# Generous for a loaded 2-core machine; bench/valkey_restart.py measures the real time.
RECOVERY_DEADLINE_S = 20.0
PROCESSES_S = 30.0  # a run goes through three processes and the model on a busy machine


@dataclass
class Bot:
    data_dir: Path
    emu: SlackEmulator
    env: dict[str, str]
    procs: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)

    def log(self, name: str) -> Path:
        return self.data_dir / f"{name}.out"

    async def start(self, name: str, *args: str) -> None:
        """Start `hitl-bot ARGS`; a serve is waited for until it serves."""
        with self.log(name).open("wb") as out:
            self.procs[name] = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", *args, env=self.env, cwd=ROOT, stdout=out, stderr=out
            )
        if args[0] == "serve":
            self.urls[name] = await _url_of(self.log(name))

    async def sigterm(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 30)
        assert code == 0, self.log(name).read_text(errors="replace")[-3000:]
        self.urls.pop(name, None)


@pytest.fixture
async def bot(data_dir: Path) -> AsyncIterator[Bot]:  # noqa: F811
    model = ScriptedModel(responder)
    model_url = await model.start()
    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "HITL_", "REDIS_URL", "OPENAI_"))
    }
    env |= {
        "HITL_DATA_DIR": str(data_dir),
        "SLACK_API_URL": emu.api_url,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "HITL_API_TOKEN": API,
        "HITL_PORT": "0",
        "OPENAI_BASE_URL": model_url,
        "HITL_MODEL": "scripted",
        "HITL_TEST_COUNT_FILE": str(data_dir / "charges.txt"),
        "PYTHONPATH": str(ROOT),
    }
    found = Bot(data_dir, emu, env)
    try:
        yield found
    finally:
        for proc in found.procs.values():
            proc.kill()
            await proc.wait()
        await emu.stop()
        await model.stop()


async def start_three(bot: Bot, *, serve_0_first: bool) -> None:
    """Two serves and a worker; with `serve_0_first`, serve-0 is up (and has started
    Valkey) before the others start and join it."""
    if serve_0_first:
        await bot.start("serve-0", "serve")
    await asyncio.gather(
        *([] if serve_0_first else [bot.start("serve-0", "serve")]),
        bot.start("serve-1", "serve"),
        bot.start("worker", "worker", "--agent", AGENT, "--min-idle", "3s"),
    )


async def healthy(http: httpx.AsyncClient, bot: Bot) -> bool:
    for url in bot.urls.values():
        try:
            if (await http.get(url + "/healthz")).status_code != 200:
                return False
        except httpx.HTTPError:
            return False
    return True


async def start_run(http: httpx.AsyncClient, url: str, amount: int) -> str:
    body = {"agent": "counting", "prompt": f"charge {amount}", "channel": "#hitl-approvals"}
    made = await http.post(url + "/v1/runs", headers=HEADERS, json=body)
    assert made.status_code == 201, made.text
    return str(made.json()["run_id"])


async def card_for(http: httpx.AsyncClient, bot: Bot, run_id: str) -> str:
    """The id of the approval the worker asked for in `run_id`, once its card is posted."""
    url = next(iter(bot.urls.values()))

    async def probe() -> str | None:
        for rid in _approval_messages(bot.emu):
            got = await http.get(f"{url}/v1/approvals/{rid}", headers=HEADERS)
            if got.json().get("run_id") == run_id:
                return rid
        return None

    return str(
        await eventually(probe, what=f"approval card for run {run_id}", timeout_s=PROCESSES_S)
    )


async def approve(http: httpx.AsyncClient, bot: Bot, rid: str) -> None:
    channel, ts = _approval_messages(bot.emu)[rid]
    bot.emu.events_url = next(iter(bot.urls.values())) + "/slack/events"
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=channel, ts=ts)


async def finished(http: httpx.AsyncClient, bot: Bot, run_id: str) -> None:
    url = next(iter(bot.urls.values()))

    async def probe() -> bool:
        got = await http.get(f"{url}/v1/runs/{run_id}", headers=HEADERS)
        return bool(got.json()["state"] == "finished")

    await eventually(probe, what=f"run {run_id} finished", timeout_s=PROCESSES_S)


def parent_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError(f"no PPid for {pid}")


def charges(bot: Bot) -> list[str]:
    path = bot.data_dir / "charges.txt"
    return path.read_text().splitlines() if path.exists() else []


async def test_kill_9_of_valkey_is_repaired_for_every_process_and_nothing_is_lost(
    bot: Bot,
) -> None:
    await start_three(bot, serve_0_first=False)  # whichever wins, all three share one
    async with httpx.AsyncClient(timeout=30) as http:
        # An approval asked for before the crash, waiting for a person.
        run_1 = await start_run(http, bot.urls["serve-0"], 1)
        rid = await card_for(http, bot, run_1)
        before = await http.get(f"{bot.urls['serve-1']}/v1/approvals/{rid}", headers=HEADERS)
        assert before.json()["state"] == "pending_review"

        (old,) = valkeys(bot.data_dir)
        os.kill(old, signal.SIGKILL)
        killed = time.monotonic()
        await eventually(
            lambda: _gone(bot, old), what="the killed Valkey gone", timeout_s=PROCESSES_S
        )

        # Nobody acts: every process comes back by itself.
        await eventually(
            lambda: healthy(http, bot), what="healthy serves", timeout_s=RECOVERY_DEADLINE_S
        )
        print(f"healthy again {time.monotonic() - killed:.2f} s after kill -9")
        (new,) = valkeys(bot.data_dir)  # exactly one process won the restart
        assert new != old

        # Nothing lost: the same request, same payload, still decidable.
        after = await http.get(f"{bot.urls['serve-1']}/v1/approvals/{rid}", headers=HEADERS)
        assert after.json() == before.json()
        await approve(http, bot, rid)
        # The worker was waiting on it when the connection dropped: it resumes the run
        # (at the latest when its entry is taken over, after --min-idle).
        await finished(http, bot, run_1)

        # The worker still takes new runs.
        run_2 = await start_run(http, bot.urls["serve-1"], 2)
        await approve(http, bot, await card_for(http, bot, run_2))
        await finished(http, bot, run_2)
        assert sorted(line.split()[1] for line in charges(bot)) == ["1", "2"]

    for name in ("serve-0", "worker", "serve-1"):
        assert valkeys(bot.data_dir) == [new]
        await bot.sigterm(name)
    # The last one out stopped it, though another process had started it.
    assert valkeys(bot.data_dir) == []


async def _gone(bot: Bot, pid: int) -> bool:
    return pid not in valkeys(bot.data_dir)


async def test_sigterm_of_the_serve_that_started_valkey_leaves_the_others_working(
    bot: Bot,
) -> None:
    await start_three(bot, serve_0_first=True)
    (pid,) = valkeys(bot.data_dir)
    assert parent_of(pid) == bot.procs["serve-0"].pid  # serve-0 started it

    await bot.sigterm("serve-0")
    assert valkeys(bot.data_dir) == [pid]  # not stopped, not restarted: the same server
    async with httpx.AsyncClient(timeout=30) as http:
        assert await healthy(http, bot)
        run = await start_run(http, bot.urls["serve-1"], 3)
        await approve(http, bot, await card_for(http, bot, run))
        await finished(http, bot, run)
    assert charges(bot) and charges(bot)[0].endswith(" 3")

    await bot.sigterm("worker")
    assert valkeys(bot.data_dir) == [pid]  # serve-1 still uses it
    await bot.sigterm("serve-1")
    assert valkeys(bot.data_dir) == []
    assert not (bot.data_dir / "valkey.sock").exists()
