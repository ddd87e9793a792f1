"""The Web API gate (bot/slack/transport/ratelimit.py) against the emulator's Slack rate limits
(bot/sandbox/slack/api/ratelimits.py): a 429 is waited out by every call of its method, not
only the one Slack answered, and the emulator says 429 the way Slack documents it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.sandbox.slack import SlackEmulator
from bot.slack.transport.client import LimitedWebClient, web_client
from bot.slack.transport.ratelimit import SLACK_LIMITS, UNPACED, limits_for
from tests.support.poll import eventually

TOKEN = "xoxb-gate"


@pytest.fixture
async def emu() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator(bot_token=TOKEN) as emu:
        yield emu


def gated(emu: SlackEmulator) -> AsyncWebClient:
    return web_client(Settings(slack_bot_token=SecretStr(TOKEN), slack_api_url=emu.api_url))


async def test_a_429_holds_every_call_of_the_method_until_retry_after(
    emu: SlackEmulator,
) -> None:
    client = gated(emu)
    assert isinstance(client, LimitedWebClient)
    first = await client.chat_postMessage(channel="#hitl-approvals", text="a")
    other = await client.chat_postMessage(channel="#hitl-oncall", text="b")
    emu.add_fault(429, count=1, retry_after=1, method="chat.update")
    t0 = time.monotonic()
    waiting = asyncio.create_task(
        client.chat_update(channel=first["channel"], ts=first["ts"], text="a2")
    )
    # Slack answered that update 429: another lane's update, in another channel, must
    # not reach Slack before the wait Slack asked for is over.
    await eventually(lambda: client.gate.closed_for("chat.update") > 0, what="the 429 heard")
    await client.chat_update(channel=other["channel"], ts=other["ts"], text="b2")
    await waiting
    updates = emu.calls.of("chat.update")
    assert [c.http_status for c in updates] == [429, 200, 200]
    limited_at = updates[0].at
    assert all(c.at >= limited_at + 1 for c in updates[1:]), [c.at - limited_at for c in updates]
    assert time.monotonic() - t0 >= 1


async def test_the_emulator_answers_past_a_channel_limit_with_retry_after(
    emu: SlackEmulator,
) -> None:
    plain = AsyncWebClient(token=TOKEN, base_url=emu.api_url, retry_handlers=[])
    for i in range(8):  # off by default: the rest of the suite posts as fast as it likes
        await plain.chat_postMessage(channel="#hitl-approvals", text=f"free {i}")
    emu.ratelimits.turn_on(scale=20)
    answers = []
    for i in range(7):  # a burst of five is allowed, then one per 0.05 s
        try:
            await plain.chat_postMessage(channel="#hitl-approvals", text=f"limited {i}")
            answers.append("ok")
        except SlackApiError as exc:
            assert exc.response["error"] == "ratelimited"
            answers.append(exc.response.headers["Retry-After"])
    assert answers[:5] == ["ok"] * 5
    assert answers[5] == "0.05"  # one Slack second, scaled
    assert len(emu.ratelimits.inside()) == (answers[6] != "ok")  # it did not wait


def test_slack_is_paced_to_its_published_limits_another_web_api_only_by_its_429s() -> None:
    assert limits_for("https://slack.com/api/") is SLACK_LIMITS
    assert limits_for("http://127.0.0.1:4000/api/") is UNPACED
