"""A person's thread reply counts whatever shape Slack gives it.

Slack sends a reply that is also sent to the channel with subtype `thread_broadcast`,
and one with a file with subtype `file_share`. Both are a person talking: "approve"
decides, an answer answers, a correction is queued, exactly as a plain reply would.
A reply that mentions the bot in a card's thread decides the card and starts no run.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.core.models import QuestionState
from bot.core.states import State
from bot.store import audit
from tests.e2e.conftest import Bot
from tests.e2e.test_slack_replies import _state
from tests.e2e.test_slack_reply_trust import _run_asking
from tests.support.poll import eventually


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_approve_sent_also_to_the_channel_decides_the_card(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 40})
    ch, ts = await bot.message_of(rid)
    reply = await bot.emu.post("UALICE", ch, "approve", thread_ts=ts, broadcast=True)
    req = await _state(bot, rid, State.APPROVED)
    assert [a.actor for a in req.approvals] == ["UALICE"]
    entry = next(e for e in await audit.entries(bot.redis, rid) if e.event == "approve")
    assert entry.via == f"thread_reply:{ch}:{reply.ts}"


async def test_an_answer_sent_also_to_the_channel_answers_the_question(bot: Bot) -> None:
    run_id, ch, home, qid = await _run_asking(bot, "Which account shall I use?")
    await bot.emu.post("UKID", ch, "the EU one", thread_ts=home, broadcast=True)

    async def answered() -> Any:
        q = await bot.questions.get(qid)
        return q if q.state == QuestionState.ANSWERED else None

    assert (await eventually(answered)).answer == "the EU one"
    assert await bot.steering.pending(run_id) == 0


async def test_a_correction_with_a_file_is_queued_with_its_comment(bot: Bot) -> None:
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
    await bot.emu.post(
        "UKID", posted.channel, "this one instead", thread_ts=posted.ts, file_name="duck.png"
    )
    await eventually(lambda: bot.steering.pending(run_id), lambda n: n == 1, what="queued")
    queued = await bot.steering.pop(run_id)
    assert queued is not None and queued.text == "this one instead"


async def test_a_mention_in_a_cards_thread_decides_it_and_starts_no_run(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 41})
    ch, ts = await bot.message_of(rid)
    await bot.emu.post("UBOB", ch, "<@UBOT> no: too late in the day", thread_ts=ts)
    req = await _state(bot, rid, State.CANCELLED)
    assert req.resolution is not None and req.resolution.text == "too late in the day"
    # A mention that does start a run, sent after: once its run exists, the earlier
    # mention's handler has had its turn too.
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
    assert [r.prompt for r in await bot.runs.list()] == ["Get me the bear!"]
