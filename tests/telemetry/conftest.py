"""`serve` in this process with its telemetry on: the Slack emulator, a policy file, and
the options a test gives (a TracerProvider, webhooks, their retry)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import SecretStr

from bot.config import Settings
from bot.core.policy import parse_policy
from bot.sandbox.slack import SlackEmulator
from bot.server.serve import ServeOptions, run_serve
from bot.store.requests import RequestStore
from tests.e2e.conftest import POLICY as E2E_POLICY
from tests.e2e.conftest import SECRET, TOKEN
from tests.support.keys import SERVE_SEED

API_TOKEN = "api-token-0123456789"
POLICY = parse_policy(E2E_POLICY)


@contextlib.asynccontextmanager
async def serving(
    redis_url: str,
    tmp_path: Path,
    *,
    settings: dict[str, Any] | None = None,
    policy: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[str]:
    """The URL of a `serve` until the block ends (`policy`: the e2e tests' by default)."""
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(policy or E2E_POLICY))
    async with SlackEmulator(signing_secret=SECRET, bot_token=TOKEN) as emu:
        s = Settings(
            slack_bot_token=SecretStr(TOKEN),
            slack_signing_secret=SecretStr(SECRET),
            slack_api_url=emu.api_url,
            redis_url=SecretStr(redis_url),
            hitl_policy=policy_file,
            hitl_port=0,
            hitl_api_token=SecretStr(API_TOKEN),
            hitl_signing_key=SecretStr(SERVE_SEED),
            hitl_data_dir=tmp_path,
            **(settings or {}),
        )
        stop = asyncio.Event()
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        opts = ServeOptions(sweep_interval_s=0.05, read_block_ms=100, **options)
        task = asyncio.create_task(run_serve(s, stop, on_ready=ready.set_result, options=opts))
        url = await asyncio.wait_for(ready, 10)
        emu.events_url = url + "/slack/events"
        try:
            yield url
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)


def store(redis: Any) -> RequestStore:
    from bot.clock import wall_ms
    from tests.support.keys import serve_signer

    return RequestStore(redis, clock=wall_ms, signer=serve_signer())  # decides as serve
