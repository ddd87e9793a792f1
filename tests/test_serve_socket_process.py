"""`hitl-bot serve` in Socket Mode as a process: the steps of docs/slack-setup.md with no
signing secret, an app token Slack refuses, and SIGTERM while it keeps trying."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from bot.sandbox.slack import SlackEmulator

# the demo's short /tmp data dir (a Valkey socket path must fit in 107 bytes), killed if left
from tests.demo.test_demo_process import data_dir, valkeys  # noqa: F401
from tests.scale.test_scale_out import _url_of
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(90)


async def test_sigterm_while_slack_refuses_the_app_token_stops_serve_and_its_valkey(
    data_dir: Path,  # noqa: F811 (the fixture imported above)
) -> None:
    async with SlackEmulator(bot_token="xoxb-p", app_token="xapp-current") as emu:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SLACK_", "HITL_", "REDIS_URL"))
        }
        # As docs/slack-setup.md's Socket Mode steps say: no SLACK_SIGNING_SECRET at all.
        env |= {
            "SLACK_BOT_TOKEN": "xoxb-p",
            "SLACK_APP_TOKEN": "xapp-revoked",
            "SLACK_API_URL": emu.api_url,
            "HITL_DATA_DIR": str(data_dir),
            "HITL_PORT": "0",
        }
        log = data_dir / "serve.log"
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "serve", env=env, stdout=out, stderr=out
            )
        try:
            url = await _url_of(log)
            text = log.read_text()
            assert "Socket Mode" in text and "no HTTP Slack endpoint" in text, text
            assert valkeys(data_dir), "serve should have started the embedded Valkey"
            async with httpx.AsyncClient() as http:
                await eventually(
                    lambda: http.get(url + "/healthz"),
                    lambda health: health.status_code == 503 and "invalid_auth" in health.text,
                    what="/healthz naming the refused app token",
                    timeout_s=20,
                )
                assert (await http.post(url + "/slack/events", content=b"{}")).status_code == 404
            proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            code = await asyncio.wait_for(proc.wait(), 10)
            assert time.monotonic() - started < 5
            assert code == 0, log.read_text()[-2000:]
            assert valkeys(data_dir) == []
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
