"""Paging in serve's real processes: two `serve` on one Valkey, a critical request that
nobody answers reaches the pager level; PagerDuty (down once) and Opsgenie are each
paged exactly once, with a link to the card; a click resolves both; no key in any log."""

from __future__ import annotations

import asyncio
import copy
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from redis.asyncio import Redis

from bot.sandbox.cards import cards
from bot.sandbox.slack import SlackEmulator
from bot.slack.blocks import render
from tests.e2e.conftest import POLICY
from tests.scale.test_scale_out import _spawn, _stop_all, _url_of
from tests.support.fakepagers import FakePagers, serve_fake
from tests.support.poll import eventually

SECRET, TOKEN, API = "paging-secret", "xoxb-paging", "paging-api-token-0123"
PD_KEY = "PDr0ut1ngKEYthatmustneverbelogged42"
OG_KEY = "og-genie-KEY-that-must-never-be-logged-7"


@pytest.fixture
def fake() -> Iterator[FakePagers]:
    yield from serve_fake()


def _policy() -> dict[str, Any]:
    policy = copy.deepcopy(POLICY)
    policy["tiers"]["critical"] |= {
        "review_timeout": "1s",  # nobody answers the first level: the pager is next
        "approvals_required": 1,
        "escalation": [
            {
                "pagerduty": {"routing_key_env": "PD_ROUTING_KEY", "severity": "critical"},
                "opsgenie": {
                    "api_key_env": "OPSGENIE_KEY",
                    "responders": [{"type": "schedule", "name": "platform-oncall"}],
                },
                "timeout": "1h",
            }
        ],
    }
    return policy


@pytest.fixture
async def serves(
    redis_url: str, redis: Redis, tmp_path: Path, fake: FakePagers
) -> AsyncIterator[dict[str, Any]]:
    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(_policy()))
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "SLACK_API_URL": emu.api_url,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "HITL_API_TOKEN": API,
        "HITL_PORT": "0",
        "HITL_POLICY": str(policy_file),
        "HITL_PAGERDUTY_URL": f"{fake.url}/v2/enqueue",
        "HITL_OPSGENIE_URL": fake.url,
        "PD_ROUTING_KEY": PD_KEY,
        "OPSGENIE_KEY": OG_KEY,
        "HITL_OUTBOX_RETRY_MS": "3000",  # the page's retry, below (15 s by default)
    }
    env.pop("SLACK_APP_TOKEN", None)
    logs = [tmp_path / f"serve{i}.log" for i in range(2)]
    procs = [await _spawn(["-m", "bot", "serve"], env, log) for log in logs]
    try:
        urls = [await _url_of(log) for log in logs]
        yield {"emu": emu, "urls": urls, "logs": logs, "procs": procs}
    finally:
        await _stop_all(procs)
        await emu.stop()


def _card(emu: SlackEmulator, rid: str) -> tuple[str, str] | None:
    """Where the request's card is, while it still shows its buttons."""
    live = [c for c in cards(emu.state()) if c.request_id == rid and c.live]
    return (live[0].channel, live[0].ts) if live else None


@pytest.mark.timeout(180)
async def test_two_serves_page_once_through_a_retry_and_resolve_after_a_click(
    serves: dict[str, Any], fake: FakePagers
) -> None:
    emu: SlackEmulator = serves["emu"]
    urls: list[str] = serves["urls"]
    # Opsgenie is down for the first try, after PagerDuty took its page: the outbox's
    # retry sends Opsgenie's, and PagerDuty's not again.
    fake.fail_next("/v2/alerts", 500)
    async with httpx.AsyncClient(timeout=30) as http:
        made = await http.post(
            f"{urls[1]}/v1/approvals",
            headers={"Authorization": f"Bearer {API}"},
            json={"tool": "deploy", "args": {"service": "api", "version": "1.4.2"}},
        )
        assert made.status_code == 201, made.text
        rid = made.json()["id"]

        # The outbox retries the page (3 s later) through whichever serve claims it.
        await eventually(
            lambda: len(fake.taken("/v2/enqueue")) == 1 and len(fake.taken("/v2/alerts")) == 1,
            what="PagerDuty and Opsgenie paged",
            timeout_s=90,
            interval_s=0.2,
        )
        where = _card(emu, rid)
        assert where is not None  # still pending, with its buttons
        emu.events_url = urls[0] + "/slack/events"
        await emu.click("UALICE", render.ACTION_APPROVE, channel=where[0], ts=where[1])

        def resolved() -> bool:
            pd = [s for s in fake.taken("/v2/enqueue") if s.body["event_action"] == "resolve"]
            return len(pd) == 1 and len(fake.taken(f"/v2/alerts/hitl-{rid}/close")) == 1

        await eventually(resolved, what="the page resolved", timeout_s=30, interval_s=0.2)
        scraped = (await http.get(f"{urls[0]}/metrics")).text

    pd_all = fake.all("/v2/enqueue")
    triggers = [s for s in pd_all if s.body["event_action"] == "trigger"]
    assert [s.status for s in triggers] == [202]  # exactly one page, through the retry
    assert {s.body["dedup_key"] for s in pd_all} == {f"hitl-{rid}"}
    trigger = triggers[-1].body
    assert trigger["routing_key"] == PD_KEY
    assert 'deploy(service="api", version="1.4.2")' in trigger["payload"]["summary"]
    (link,) = trigger["links"]
    assert link["href"].endswith(f"/archives/{where[0]}/p{where[1].replace('.', '')}")
    (create,) = fake.taken("/v2/alerts")[:1]
    assert create.body["alias"] == f"hitl-{rid}"
    assert create.body["responders"] == [{"type": "schedule", "name": "platform-oncall"}]
    (close,) = fake.taken(f"/v2/alerts/hitl-{rid}/close")
    assert close.body["note"].startswith("hitl-bot: the request left review: approved by UALICE")
    creates = [s.status for s in fake.all("/v2/alerts") if s.path == "/v2/alerts"]
    assert creates == [500, 202]
    assert 'hitl_pages_total{action="trigger",outcome="sent",service="pagerduty"} 1' in scraped
    assert 'hitl_pages_total{action="trigger",outcome="failed",service="opsgenie"} 1' in scraped
    assert 'hitl_pages_total{action="resolve",outcome="sent",service="opsgenie"} 1' in scraped

    for p in serves["procs"]:
        p.send_signal(signal.SIGTERM)
        await asyncio.wait_for(p.wait(), 20)
    text = "".join(log.read_text(errors="replace") for log in serves["logs"])
    assert "opsgenie trigger of" in text  # the failed try was logged...
    assert PD_KEY not in text and OG_KEY not in text  # ...without a key
