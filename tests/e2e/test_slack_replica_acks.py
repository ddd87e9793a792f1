"""A person's Approve in Slack while the replica stalls (HITL_REPLICA_ACKS=1): told "not
yet saved, try again", never "Approved"; the same click once the replica is back
approves it, and the card says so. A click while the primary is down is told to try
again too, never left unanswered. An answer or a correction typed in a run's thread
while the replica stalls is told the same, and an answer is never taken as a
correction instead."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.core.models import QuestionState
from bot.core.states import State
from bot.slack.blocks import render
from bot.slack.blocks.options import ACTION_OPTION
from tests.e2e.conftest import Bot, all_text, button_values
from tests.e2e.test_slack_options import REVIEW, _card, _home
from tests.e2e.test_slack_reply_trust import _run_asking
from tests.support.poll import eventually
from tests.support.replicated import Replicated


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


async def test_an_unconfirmed_answer_is_told_to_try_again_and_never_read_as_a_correction(
    bot: Bot, replicated: Replicated
) -> None:
    run_id, ch, home, qid = await _run_asking(bot, "Which account shall I use?")
    (replica,) = replicated.followers
    replica.pause()
    try:
        await bot.emu.post("UKID", ch, "the EU one", thread_ts=home)
        told = await eventually(lambda: _ephemeral(bot, "UKID", "Not yet saved"))
        assert "Try again" in told
        assert await bot.steering.pending(run_id) == 0  # not queued as a correction instead
    finally:
        replica.resume()
    await bot.emu.post("UKID", ch, "the EU one", thread_ts=home)  # as told: again

    async def answered() -> Any:
        q = await bot.questions.get(qid)
        return q if q.state == QuestionState.ANSWERED else None

    assert (await eventually(answered)).answer == "the EU one"


async def test_an_unconfirmed_correction_is_told_to_try_again(
    bot: Bot, replicated: Replicated
) -> None:
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
    (replica,) = replicated.followers
    replica.pause()
    try:
        await bot.emu.post("UKID", posted.channel, "the duck instead", thread_ts=posted.ts)
        told = await eventually(lambda: _ephemeral(bot, "UKID", "Not yet saved"))
        assert "Try again" in told
    finally:
        replica.resume()
    # Queued on the primary all along; with the replica back, the queue is confirmed.
    assert await bot.steering.pending(run_id) == 1


async def test_an_unconfirmed_option_click_is_told_to_try_again_not_that_it_closed(
    bot: Bot, replicated: Replicated
) -> None:
    run = await bot.runs.start(agent="claw", prompt="pick", requester="UKID", channel=REVIEW)

    ch, thread = await _home(bot, run.id)
    q = await bot.questions.ask("Go?", timeout_ms=600_000, run_id=run.id, options=["Go", "Stop"])
    card = await _card(bot, q.id, ch, thread)
    (replica,) = replicated.followers
    replica.pause()
    try:
        await bot.emu.click("UKID", f"{ACTION_OPTION}_0", channel=card.channel, ts=card.ts)
        told = await eventually(lambda: _ephemeral(bot, "UKID", "Not yet saved"))
        assert "Try again" in told
    finally:
        replica.resume()
    await bot.emu.click("UKID", f"{ACTION_OPTION}_0", channel=card.channel, ts=card.ts)

    async def answered() -> Any:
        got = await bot.questions.get(q.id)
        return got if got.state == QuestionState.ANSWERED else None

    assert (await eventually(answered)).answer == "Go"
