"""`kill -9` of a `hitl-bot serve` after Slack stored its card but before it saved the ts:
the next serve leaves exactly one card for the request, and that card's buttons work."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx
import pytest
import yaml
from redis.asyncio import Redis

from bot.core.states import State
from bot.sandbox.cards import cards, cards_per_request, live_cards_per_request
from bot.sandbox.slack import SlackEmulator
from bot.slack.blocks import render
from bot.store import keys
from bot.store.requests import RequestStore
from tests.e2e.conftest import POLICY
from tests.scale.test_scale_out import _spawn, _stop_all, _url_of
from tests.support.poll import eventually

SECRET, TOKEN, API = "kill-secret", "xoxb-kill", "kill-api-token-0123"

# A dead serve's entry is taken over after the outbox's retry pause: 5 s here
# (HITL_OUTBOX_RETRY_MS, 15 s by default), still far beyond the moment the first serve is
# killed. The deadlines leave room for a 60 s lease as well: a notifier that waited one
# out fails on the second card it posts, not on the test's timeout.
RETRY_MS = "5000"
pytestmark = pytest.mark.timeout(240)


async def test_kill_9_between_post_and_saved_ts_leaves_one_working_card(
    redis_url: str, redis: Redis, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "HITL_API_TOKEN": API,
        "HITL_POLICY": str(policy),
        "HITL_PORT": "0",
        "HITL_OUTBOX_RETRY_MS": RETRY_MS,
    }
    env.pop("SLACK_APP_TOKEN", None)
    procs: list[asyncio.subprocess.Process] = []
    async with SlackEmulator(signing_secret=SECRET, bot_token=TOKEN) as emu:
        env["SLACK_API_URL"] = emu.api_url
        try:
            # The card is stored at once; its answer is held far past any reaction time.
            emu.add_delay(600, method="chat.postMessage")
            first = await _spawn(["-m", "bot", "serve"], env, tmp_path / "serve1.log")
            procs.append(first)
            url = await _url_of(tmp_path / "serve1.log")
            async with httpx.AsyncClient(timeout=10) as http:
                made = await http.post(
                    f"{url}/v1/approvals",
                    headers={"Authorization": f"Bearer {API}"},
                    json={"tool": "drop_claw", "args": {"x": 1}, "channel": "#hitl-approvals"},
                )
            assert made.status_code == 201, made.text
            rid = made.json()["id"]

            async def stored_and_held() -> bool:
                return emu.faults.held == 1 and cards_per_request(emu.state())[rid] == 1

            await eventually(
                stored_and_held, what="the card in the channel, its answer held", timeout_s=20
            )
            first.send_signal(signal.SIGKILL)
            await first.wait()
            assert not await redis.hget(keys.request(rid), "msg_ts")  # the window, for real

            second = await _spawn(["-m", "bot", "serve"], env, tmp_path / "serve2.log")
            procs.append(second)
            emu.events_url = await _url_of(tmp_path / "serve2.log") + "/slack/events"

            async def saved() -> str | None:
                return await redis.hget(keys.request(rid), "msg_ts")

            ts = await eventually(
                saved, what="the second serve saving the card's ts", timeout_s=150
            )
            state = emu.state()
            assert cards_per_request(state)[rid] == 1, cards(state)
            (card,) = [c for c in cards(state) if c.request_id == rid]
            assert card.ts == ts and card.live

            out = await emu.click("UALICE", render.ACTION_APPROVE, channel=card.channel, ts=ts)
            assert out.status == 200, out

            async def approved_and_updated() -> bool:
                req = await RequestStore(redis).get(rid)
                live = live_cards_per_request(emu.state())[rid]
                return req.state == State.APPROVED and live == 0

            await eventually(
                approved_and_updated, what="the approval applied and the card updated", timeout_s=20
            )
            assert cards_per_request(emu.state())[rid] == 1
        finally:
            await _stop_all(procs)
