"""A port taken between the demo's pick and serve's bind: the demo comes up on another
port instead of exiting (two demos started at once used to race for 3000); serve given a
busy port says which and how to fix it."""

from __future__ import annotations

import asyncio
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.config import Settings
from bot.demo import app as demo_app
from bot.demo.app import DemoOptions
from bot.errors import PortInUse
from bot.sandbox.slack import SlackEmulator
from bot.server.serve import run_serve
from tests.demo.running import running_demo
from tests.e2e.conftest import SECRET, TOKEN
from tests.support.keys import SERVE_SEED


@pytest.fixture
def held() -> Iterator[int]:
    """A port another process listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hd", dir="/tmp"))  # short: a Unix socket lives there
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_the_demo_takes_another_port_when_its_pick_was_taken(
    held: int, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the pick said free, and by the bind another process had it
    monkeypatch.setattr(demo_app, "pick_api_port", lambda host, data_dir: held)
    options = DemoOptions(agent="claw", port=0, data_dir=data_dir)
    async with running_demo(data_dir, options) as (page, printed):
        assert (await page.get("/_emu/state")).status_code == 200
        api = re.search(r"HITL_API_URL=http://127\.0\.0\.1:(\d+)", printed.getvalue())
        assert api is not None and int(api.group(1)) != held


async def test_serve_on_a_busy_port_names_it_and_the_setting(
    held: int, tmp_path: Path, redis_url: str
) -> None:
    async with SlackEmulator(signing_secret=SECRET, bot_token=TOKEN) as emu:
        settings = Settings(
            slack_bot_token=SecretStr(TOKEN),
            slack_signing_secret=SecretStr(SECRET),
            slack_api_url=emu.api_url,
            redis_url=SecretStr(redis_url),
            hitl_port=held,
            hitl_data_dir=tmp_path,
            hitl_signing_key=SecretStr(SERVE_SEED),
        )
        with pytest.raises(PortInUse) as caught:
            await asyncio.wait_for(run_serve(settings, asyncio.Event()), 30)
    assert f"127.0.0.1:{held}" in str(caught.value) and "HITL_PORT" in str(caught.value)
