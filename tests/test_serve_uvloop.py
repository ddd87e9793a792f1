"""`HITL_UVLOOP=1`: `hitl-bot serve` runs on uvloop, Socket Mode link and API included;
asked for and not installed, it refuses to start and says how to fix it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from redis.asyncio import Redis

from bot.core.states import State
from bot.sandbox.slack import SlackEmulator
from bot.sandbox.slack.defaults import default_users
from bot.slack.blocks import render
from bot.store.keys import shard_of
from tests.e2e.conftest import POLICY
from tests.scale.test_scale_out import _url_of
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(90)
TOKEN, APP_TOKEN, API_TOKEN = "xoxb-uv", "xapp-uv", "uvloop-api-token-5c1e"


def _env(redis_url: str, tmp_path: Path, api_url: str) -> dict[str, str]:
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_", "REDIS_"))}
    return env | {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": api_url,
        "REDIS_URL": redis_url,
        "HITL_POLICY": str(policy),
        "HITL_API_TOKEN": API_TOKEN,
        "HITL_PORT": "0",
        "HITL_UVLOOP": "1",
    }


def _loaded(pid: int, name: str) -> bool:
    """Whether the process has a shared library of `name` mapped (Linux)."""
    return f"/{name}/" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps")
async def test_serve_on_uvloop_creates_over_http_and_takes_a_click_over_socket_mode(
    redis_url: str, redis: Redis, tmp_path: Path
) -> None:
    async with SlackEmulator(bot_token=TOKEN, app_token=APP_TOKEN, users=default_users()) as emu:
        log = tmp_path / "serve.log"
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "serve",
                env=_env(redis_url, tmp_path, emu.api_url),
                stdout=out,
                stderr=out,
            )
        try:
            url = await _url_of(log)
            await emu.socket.wait_connected()
            assert _loaded(proc.pid, "uvloop"), "serve should run on uvloop"
            auth = {"Authorization": f"Bearer {API_TOKEN}"}
            async with httpx.AsyncClient(base_url=url, headers=auth) as http:
                made = await http.post("/v1/approvals", json={"tool": "refund", "args": {"n": 1}})
                assert made.status_code == 201, made.text
                rid = made.json()["id"]

                async def posted() -> tuple[str, str] | None:
                    key = f"hitl:{{s{shard_of(rid):02d}}}:req:{rid}"
                    ch, ts = await redis.hmget(key, ["msg_channel", "msg_ts"])
                    return (ch, ts) if ch and ts else None

                ch, ts = await eventually(posted, timeout_s=20)
                click = await emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
                assert click.status == 200
                decided = await http.get(f"/v1/approvals/{rid}", params={"wait": 10})
                assert decided.json()["state"] == State.APPROVED
                assert (await http.get("/healthz")).status_code == 200
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 15) == 0, log.read_text()[-2000:]
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_serve_asked_for_uvloop_without_it_refuses_to_start(
    redis_url: str, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow" / "uvloop"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('uvloop is not installed here')\n")
    env = _env(redis_url, tmp_path, "http://127.0.0.1:9/api/")
    env["PYTHONPATH"] = os.pathsep.join([str(shadow.parent), env.get("PYTHONPATH", "")])
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 2, (out + err).decode()[-2000:]
    said = " ".join(err.decode().split())  # the terminal's line breaks
    assert "HITL_UVLOOP is set but uvloop is not installed" in said
    assert "pip install 'hitl-bot[uvloop]'" in said
