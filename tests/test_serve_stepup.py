"""`serve` with a policy tier that asks for a passkey: it needs its public address."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

import pytest
import yaml

from bot.config import Settings
from bot.demo.policy import DEMO_POLICY
from bot.errors import ConfigError
from bot.server.serve import run_serve


async def test_a_step_up_tier_without_a_public_url_stops_serve_naming_it(
    tmp_path: Path,
) -> None:
    data = copy.deepcopy(DEMO_POLICY)
    data["tiers"]["critical"]["step_up"] = "passkey"
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(data))
    settings = Settings(
        slack_bot_token="xoxb-1",
        slack_signing_secret="s",
        hitl_policy=policy,
        redis_url="redis://127.0.0.1:1/0",  # never reached: the check comes first
    )
    with pytest.raises(ConfigError) as err:
        await asyncio.wait_for(run_serve(settings, asyncio.Event()), 10)
    assert "HITL_PUBLIC_URL" in str(err.value) and "critical" in str(err.value)
