"""A person's Approve in Slack while the replica stalls (HITL_REPLICA_ACKS=1): told "not
yet saved, try again", never "Approved"; the same click once the replica is back
approves it, and the card says so. A click while the primary is down is told to try
again too, never left unanswered."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.core.states import State
from bot.slack import render
from tests.e2e.conftest import Bot, all_text, button_values
from tests.poll import eventually
from tests.replicated import Replicated


@pytest.fixture(scope="module")
def replicated() -> Iterator[Replicated]:
    r = Replicated().start()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture(scope="module")
def redis_url(replicated: Replicated) -> str:
    return replicated.url


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client of the primary, whatever store the rest of the run uses (this
    module is about one primary and its replica; tests/cluster has the cluster's)."""
    client = Redis.from_url(redis_url, decode_responses=True)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_replica_acks": 1, "hitl_replica_ack_timeout_ms": 300}


async def test_an_unconfirmed_approve_is_not_yet_saved_and_a_second_click_saves_it(
    bot: Bot, replicated: Replicated
) -> None:
    rid = await bot.propose("refund", {"amount": 30, "to": "cust-7"})
    ch, ts = await bot.message_of(rid)
    (replica,) = replicated.followers
    replica.pause()
    try:
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
        told = await eventually(lambda: _ephemeral(bot, "UALICE", "Not yet saved"))
        assert "Try again" in told
        card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
        assert button_values(card.blocks)  # still waiting: nothing on it says Approved
        assert "Approved" not in all_text(card.blocks)
    finally:
        replica.resume()
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved_card() -> bool:
        card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
        return not button_values(card.blocks)

    await eventually(approved_card, what="the card updated once the replica confirmed")
    assert (await bot.requests.get(rid)).state == State.APPROVED


def _ephemeral(bot: Bot, user: str, text: str) -> str | None:
    for m in bot.emu.ephemerals(user):
        if text in m.text:
            return str(m.text)
    return None


async def test_a_click_while_the_primary_is_down_is_told_to_try_again(
    bot: Bot, replicated: Replicated
) -> None:
    rid = await bot.propose("refund", {"amount": 31, "to": "cust-8"})
    ch, ts = await bot.message_of(rid)
    replicated.kill(replicated.primary)
    try:
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
        told = await eventually(lambda: _ephemeral(bot, "UALICE", "did not answer"))
        assert "nothing was decided" in told and "Try again" in told
    finally:
        replicated.restart(replicated.primary)
