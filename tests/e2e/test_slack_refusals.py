"""A card Slack refuses until a person fixes something, against the real bot.

With the bot not invited to the review channel, `chat.postMessage` answered
`not_in_channel`; the notifier logged it without the channel, acknowledged the notice
and never tried again, so the request waited with no card anywhere until it timed out
(issue 42). Now the notice stays in the outbox and is retried with backoff; the request
says why (API, `hitl-bot pending`), an ERROR line names the channel and the fix,
`/metrics` counts the refusal by code, the run's thread is told once, and the card
arrives once the bot is invited.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import pytest

from bot.core.states import State
from bot.supervise import Backoff
from tests.cli.test_cli import cli
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}
REVIEW = "#hitl-approvals"
FIX = f"/invite @hitl-bot to {REVIEW}"


@pytest.fixture
def serve_options() -> dict[str, Any]:
    """Refused notices tried again within a second, not after 15 s."""
    return {"refusal_backoff": Backoff(first_s=0.1, cap_s=0.4)}


async def _refusals(bot: Bot, error: str) -> int:
    async with httpx.AsyncClient() as http:
        text = (await http.get(bot.url + "/metrics")).text
    found = re.search(rf'^hitl_slack_refusals_total\{{error="{error}"\}} (\d+)$', text, re.M)
    return int(found.group(1)) if found else 0


async def _view(bot: Bot, rid: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as http:
        got = await http.get(f"/v1/approvals/{rid}")
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


def _cards_of(bot: Bot, rid: str) -> list[Any]:
    return [m for m in bot.emu.messages(REVIEW) if rid in str(m.blocks) + m.text]


async def test_a_card_refused_until_the_bot_is_invited_is_posted_then(
    bot: Bot, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="bot.slack.delivery.refusals")
    bot.emu.workspace.scopes.discard("chat:write.public")  # as the app had it
    bot.emu.remove_bot(REVIEW)
    run = await bot.runs.start(agent="claw", prompt="bear", requester="UKID", channel="#general")

    async def home() -> tuple[str, str] | None:
        got = await bot.runs.get(run.id)
        return (got.channel, got.thread_ts) if got.channel and got.thread_ts else None

    run_channel, run_thread = await eventually(home, what="the run's thread")
    rid = await bot.propose("refund", {"amount": 5, "to": "cust-5"}, requester="api", run_id=run.id)

    # Kept and retried: refused again and again, never acknowledged and dropped.
    await eventually(lambda: _refusals(bot, "not_in_channel"), what="a refusal counted")

    async def retried() -> bool:
        return await _refusals(bot, "not_in_channel") >= 3

    await eventually(retried, what="the refused card tried again")
    assert _cards_of(bot, rid) == []
    view = await _view(bot, rid)
    assert view["state"] == State.PENDING_REVIEW.value
    assert "not_in_channel" in view["card_error"] and FIX in view["card_error"], view
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(REVIEW in line and FIX in line and rid in line for line in logged), logged
    code, out, err = await cli("pending", redis_url=redis_url)
    flat = " ".join(out.split())
    assert code == 0 and f"{rid}: its Slack card could not be drawn" in flat, (out, err)
    assert "not_in_channel" in flat and FIX in flat

    def told() -> list[str]:
        return [m.text for m in bot.emu.replies(run_channel, run_thread) if "could not" in m.text]

    await eventually(told, what="the run's thread told")
    bot.emu.invite_bot(REVIEW)
    await bot.message_of(rid)  # the retry after the fix posts it
    assert len(_cards_of(bot, rid)) == 1
    assert "card_error" not in await _view(bot, rid)
    assert len(told()) == 1, told()  # once, for all the retries
    assert FIX in told()[0] and rid in told()[0]
    code, out, err = await cli("show", rid, redis_url=redis_url)
    assert code == 0 and "could not be drawn" not in out, (out, err)


async def test_a_refusal_no_retry_can_fix_is_given_up_naming_the_channel(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    """A card whose thread's first message is gone can never be posted there: dropped,
    said and counted, and the next card is not held up behind it."""
    caplog.set_level(logging.ERROR, logger="bot.slack.delivery.refusals")
    home = await bot.emu.post("UKID", REVIEW, "a run's home")
    run = await bot.runs.start(
        agent="claw", prompt="bear", requester="UKID", channel=home.channel, thread_ts=home.ts
    )
    bot.emu.workspace.delete_message(home.channel, home.ts)
    rid = await bot.propose("refund", {"amount": 6, "to": "cust-6"}, run_id=run.id)

    async def given_up() -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if "for good: thread_not_found" in r.getMessage() and rid in r.getMessage()
        ]

    lines = await eventually(given_up, what="the refusal given up")
    assert "CHITLAPPROVALS" in lines[0] or REVIEW in lines[0], lines
    assert await _refusals(bot, "thread_not_found") == 1
    later = await bot.propose("refund", {"amount": 7, "to": "cust-7"})
    await bot.message_of(later)


async def test_a_public_channel_the_bot_never_joined_gets_cards_but_no_reply_reaches_it(
    bot: Bot,
) -> None:
    """With chat:write.public the card posts, and Slack sends the bot nothing from the
    channel: what serve's start and policy check warn of (test_slack_channels.py)."""
    bot.emu.remove_bot(REVIEW)
    rid = await bot.propose("refund", {"amount": 8, "to": "cust-8"})
    channel, ts = await bot.message_of(rid)
    reply = await bot.emu.post("UALICE", channel, "approve", thread_ts=ts)
    assert reply.event_ids == []  # never delivered: the bot cannot hear it
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
