"""HITL_SHADOW_POLICY on the real serve: calls made over the API are judged by the
shadow too, only the real policy is enforced, /metrics counts the disagreements and
`hitl-bot policy shadow-report` lists them."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from redis.asyncio import Redis

from bot.config import Settings
from bot.errors import ConfigError
from bot.server.serve import run_serve
from bot.store import keys
from tests.cli.test_cli import cli
from tests.e2e.conftest import POLICY, SECRET, TOKEN, Bot
from tests.support.poll import eventually

API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN

# The shadow under consideration: every refund at high, whatever its amount.
SHADOW: dict[str, Any] = copy.deepcopy(POLICY)
SHADOW["tools"]["refund"] = {"tier": "high"}


@pytest.fixture
def serve_env(tmp_path: Path) -> dict[str, Any]:
    shadow = tmp_path / "shadow.yaml"
    shadow.write_text(yaml.safe_dump(SHADOW))
    return {"hitl_shadow_policy": shadow}


async def _ask(bot: Bot, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        resp = await http.post(
            bot.url + "/v1/approvals",
            json={"tool": tool, "args": args},
            headers={"Authorization": f"Bearer {API_TOKEN}"},
        )
    assert resp.status_code == 201, resp.text
    body: dict[str, Any] = resp.json()
    return body


async def test_a_shadow_disagreement_is_recorded_counted_and_reported(
    bot: Bot, redis: Redis, redis_url: str
) -> None:
    small = await _ask(bot, "refund", {"amount": 5})
    same = await _ask(bot, "deploy", {"version": "2"})
    # Only the real policy is enforced: the small refund is gated at medium.
    assert small["risk"] == "medium"
    verdict = json.loads(await redis.hget(keys.request(small["id"]), "shadow") or "{}")
    assert verdict == {"tier": "high", "review": True, "differs": ["tier", "approvers"]}

    async def counted() -> str | None:
        async with httpx.AsyncClient() as http:
            text = (await http.get(bot.url + "/metrics")).text
        return text if "hitl_shadow_verdicts_total 2" in text else None

    text = await eventually(counted, what="the shadow verdicts counted")
    assert 'hitl_shadow_disagreements_total{kind="tier",tool="refund"} 1' in text
    assert 'hitl_shadow_disagreements_total{kind="approvers",tool="refund"} 1' in text
    assert 'tool="deploy"' not in text
    assert "# TYPE hitl_shadow_disagreements_total counter" in text

    code, out, err = await cli("policy", "shadow-report", "--json", redis_url=redis_url)
    assert code == 0, err
    report = json.loads(out)
    assert report["judged"] == 2
    assert [(d["request_id"], d["differs"]) for d in report["disagreements"]] == [
        (small["id"], ["tier", "approvers"])
    ]
    assert same["id"] not in out
    code, out, _ = await cli("policy", "shadow-report", redis_url=redis_url)
    assert code == 0
    assert "2 requests made since" in out and "1 disagree with the real one" in out
    assert small["id"] in out and "medium" in out and "high" in out


async def test_a_shadow_file_that_cannot_be_read_stops_start_up(
    redis_url: str, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-shadow.yaml"
    settings = Settings(
        slack_bot_token=TOKEN,
        slack_signing_secret=SECRET,
        redis_url=redis_url,
        hitl_port=0,
        hitl_shadow_policy=missing,
    )
    with pytest.raises(ConfigError, match="HITL_SHADOW_POLICY") as caught:
        await asyncio.wait_for(run_serve(settings, asyncio.Event()), 10)
    assert str(missing) in str(caught.value)
    # every process that creates requests (or reads them) refuses it the same way
    code, _, err = await cli(
        "pending", redis_url=redis_url, env={"HITL_SHADOW_POLICY": str(missing)}
    )
    unwrapped = err.replace("\n", "")  # Rich wraps stderr at 80 columns
    assert code == 2 and "HITL_SHADOW_POLICY" in err and "no-such-shadow.yaml" in unwrapped
