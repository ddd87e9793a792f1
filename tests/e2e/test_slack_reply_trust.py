"""Thread replies that decide only what they should, through the emulator.

- While a run waits on its question, a reply in its thread is the answer, never a
  decision on a card filed under the run meanwhile.
- A reply older than the card it would decide never decides it.
- Only the people who may steer a run may answer its question.
- A reply that is none of decision, answer or correction is told why, and logged.
- A member of another workspace (Slack Connect) is never "anyone", nor a channel member.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import uuid4

import pytest

from bot.core.models import QuestionState, RunState
from bot.core.states import State
from bot.sandbox.slack.workspace import Message, User
from bot.slack.blocks import render, views
from bot.store import audit, keys
from bot.store.keys import run_audit
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

GUEST_TEAM = "TACMECORP"


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _run_asking(bot: Bot, question: str) -> tuple[str, str, str, str]:
    """A run started by the kid in #general, waiting on `question`: (run, channel, home, q)."""
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    q = await bot.questions.ask(question, timeout_ms=600_000, run_id=run_id)
    await bot.runs.update(run_id, state=RunState.WAITING, waiting_on=q.id)

    async def asked() -> bool:
        return any(question in m.text for m in bot.emu.replies(ch, home))

    await eventually(asked)
    return run_id, ch, home, q.id


def _told(bot: Bot, user: str, words: str) -> Any:
    async def probe() -> bool:
        return any(words in e.text for e in bot.emu.ephemerals(user))

    return probe


async def test_while_a_question_waits_the_initiators_yes_answers_it_and_approves_nothing(
    bot: Bot,
) -> None:
    run_id, ch, home, qid = await _run_asking(bot, "Shall I go ahead? (yes/no)")
    # another agent files a request under the run; its card lands in the run's thread
    other = await bot.propose("refund", {"amount": 7}, run_id=run_id, requester="agent-b")
    await bot.message_of(other)
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)

    async def answered() -> Any:
        q = await bot.questions.get(qid)
        return q if q.state != QuestionState.OPEN else None

    q = await eventually(answered)
    assert (q.answer, q.answered_by) == ("yes", "UKID")
    req = await bot.requests.get(other)
    assert req.state == State.PENDING_REVIEW and not req.approvals
    assert all(e.kind != "refused" for e in await audit.entries(bot.redis, other))


async def test_a_reply_older_than_the_card_never_decides_it(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    rid = await bot.propose("refund", {"amount": 40})
    ch, ts = await bot.message_of(rid)
    # Alice's "approve" was posted a minute before the card, and Slack delivers it late.
    whole, _, frac = ts.partition(".")
    early = f"{int(whole) - 60}.{frac}"
    late = bot.emu.workspace.add_message(
        Message(ch, early, "approve", "UALICE", thread_ts=ts, client_msg_id=str(uuid4()))
    )
    envelope = bot.emu.payloads.envelope(
        bot.emu.payloads.message_event(late, bot.emu.workspace.channels[ch])
    )
    with caplog.at_level(logging.INFO, logger="bot.slack.listeners.replies"):
        assert (await bot.emu.deliverer.send_event(envelope)).ok
        await eventually(_told(bot, "UALICE", "posted before the card"))
    assert any("older than its card" in r.getMessage() for r in caplog.records)
    req = await bot.requests.get(rid)
    assert req.state == State.PENDING_REVIEW and not req.approvals
    # the same words posted after the card decide as ever
    await bot.emu.post("UALICE", ch, "approve", thread_ts=ts)

    async def approved() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)


async def test_someone_who_may_not_steer_the_run_cannot_answer_its_question(bot: Bot) -> None:
    run_id, ch, home, qid = await _run_asking(bot, "Which bear, the brown one?")
    await bot.emu.post("UCAROL", ch, "the white one", thread_ts=home)
    await eventually(_told(bot, "UCAROL", "only the person who started it"))
    told = next(e for e in bot.emu.ephemerals("UCAROL") if run_id in e.text)
    assert told.thread_ts == home
    assert (await bot.questions.get(qid)).state == QuestionState.OPEN
    trail = [str(x) for x in await bot.redis.lrange(run_audit(run_id), 0, -1)]
    assert any('"what": "answer"' in e and "UCAROL" in e for e in trail)
    assert await bot.steering.pending(run_id) == 0  # nor did it become a correction
    await bot.emu.post("UKID", ch, "the brown one", thread_ts=home)  # the initiator may

    async def answered() -> bool:
        return (await bot.questions.get(qid)).answer == "the brown one"

    await eventually(answered)


async def test_a_reply_that_goes_nowhere_is_told_why_and_logged(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    rid = await bot.propose("refund", {"amount": 40})
    ch, ts = await bot.message_of(rid)
    with caplog.at_level(logging.INFO, logger="bot.slack.listeners.threads"):
        await bot.emu.post("UCAROL", ch, "hmm, which customer is this?", thread_ts=ts)
        await eventually(_told(bot, "UCAROL", "yours was neither"))
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

        async def approved() -> bool:
            return (await bot.requests.get(rid)).state == State.APPROVED

        await eventually(approved)
        await bot.emu.post("UCAROL", ch, "ok then, thanks", thread_ts=ts)
        await eventually(_told(bot, "UCAROL", "Nothing in this thread waits"))
    lines = [r for r in caplog.records if "steers nothing" in r.getMessage()]
    assert len(lines) == 2 and all(getattr(r, "actor", "") == "UCAROL" for r in lines)
    # a thread the bot never posted in stays a conversation among people
    talk = await bot.emu.post("UALICE", "#general", "lunch?")
    await bot.emu.post("UBOB", "#general", "sure", thread_ts=talk.ts)
    await bot.emu.settle()
    assert not bot.emu.ephemerals("UBOB")


async def test_a_reply_in_an_ended_runs_thread_is_told_so(bot: Bot) -> None:
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    await bot.runs.update(run_id, state=RunState.FINISHED)
    await bot.emu.post("UKID", ch, "and now the penguin", thread_ts=home)
    await eventually(_told(bot, "UKID", "has ended"))
    assert await bot.steering.pending(run_id) == 0


def _guest(bot: Bot) -> str:
    """A member of another workspace, in every public channel (a Slack Connect guest)."""
    ws = bot.emu.workspace
    ws.users["UGUEST"] = User("UGUEST", "guest", "Guest of Acme", team_id=GUEST_TEAM)
    for channel in ws.channels.values():
        if channel.kind == "channel":
            channel.members.append("UGUEST")
    return "UGUEST"


async def test_a_slack_connect_guest_is_not_anyone_and_their_click_is_refused(bot: Bot) -> None:
    guest = _guest(bot)
    rid = await bot.propose("refund", {"amount": 40})  # medium: approvers "*"
    ch, ts = await bot.message_of(rid)
    await bot.emu.click(guest, render.ACTION_APPROVE, channel=ch, ts=ts)
    await eventually(_told(bot, guest, "another workspace"))
    refused = [e for e in await audit.entries(bot.redis, rid) if e.kind == "refused"]
    assert [(e.actor, e.reason_code) for e in refused] == [(guest, "not_eligible")]
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW


async def test_a_slack_connect_guests_reply_is_refused_even_as_a_channel_member(
    bot: Bot,
) -> None:
    guest = _guest(bot)
    # low names nobody: the members of #hitl-approvals decide, and the guest is one
    rid = await bot.propose("post_note", {"text": "hello"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.post(guest, ch, "approve", thread_ts=ts)
    await eventually(_told(bot, guest, "another workspace"))
    refused = [e for e in await audit.entries(bot.redis, rid) if e.kind == "refused"]
    assert [(e.actor, e.via is not None) for e in refused] == [(guest, True)]
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    await bot.emu.post("UBOB", ch, "approve", thread_ts=ts)  # a member of this workspace

    async def approved() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)


async def test_a_slack_connect_guest_cannot_answer_a_runs_question(bot: Bot) -> None:
    guest = _guest(bot)
    _, ch, home, qid = await _run_asking(bot, "Shall I go ahead? (yes/no)")
    await bot.emu.post(guest, ch, "yes", thread_ts=home)
    await eventually(_told(bot, guest, "member of another workspace"))
    assert (await bot.questions.get(qid)).state == QuestionState.OPEN


async def test_the_answer_button_is_limited_to_who_may_steer_the_run_too(bot: Bot) -> None:
    _, _, _, qid = await _run_asking(bot, "Shall I go ahead? (yes/no)")
    ch, ts = await eventually(lambda: _question_card(bot, qid))
    answers = {views.ANSWER_BLOCK: {views.ANSWER_TEXT_ACTION: "yes"}}
    for user in ("UCAROL", "UKID"):
        await bot.emu.click(user, render.ACTION_ANSWER, channel=ch, ts=ts)

        async def modal(user: str = user) -> Any:
            return bot.emu.open_view(user)

        view = await eventually(modal)
        out = await bot.emu.submit(user, view.id, answers)
        if user == "UCAROL":
            assert "may answer" in json.dumps(out.errors), out
            assert (await bot.questions.get(qid)).state == QuestionState.OPEN
        else:
            assert out.view_action == "closed", out
    q = await bot.questions.get(qid)
    assert (q.answer, q.answered_by) == ("yes", "UKID")


async def _question_card(bot: Bot, qid: str) -> tuple[str, str] | None:
    ch, ts = await bot.redis.hmget(keys.question(qid), ["msg_channel", "msg_ts"])
    return (ch, ts) if ch and ts else None


async def test_a_question_under_an_outside_agents_own_run_id_can_be_answered(bot: Bot) -> None:
    # An SDK or API agent names its own run id: the bot keeps no run record for it, so
    # whoever the question's channel shows it to answers, as for a question of no run.
    q = await bot.questions.ask(
        "Which warehouse?", timeout_ms=600_000, run_id=f"outside-{uuid4().hex[:8]}"
    )
    ch, ts = await eventually(lambda: _question_card(bot, q.id))
    await bot.emu.click("UCAROL", render.ACTION_ANSWER, channel=ch, ts=ts)
    view = await eventually(lambda: _open_view(bot, "UCAROL"))
    answers = {views.ANSWER_BLOCK: {views.ANSWER_TEXT_ACTION: "the north one"}}
    out = await bot.emu.submit("UCAROL", view.id, answers)
    assert out.view_action == "closed", out
    got = await bot.questions.get(q.id)
    assert (got.state, got.answer, got.answered_by) == (
        QuestionState.ANSWERED,
        "the north one",
        "UCAROL",
    )


async def _open_view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)
