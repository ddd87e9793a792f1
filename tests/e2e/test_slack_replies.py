"""Deciding by thread reply, through the emulator: the same rules as the buttons."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import pytest

from bot.core.ids import is_question_id
from bot.core.models import WORKER, Decision
from bot.core.states import Event, State
from bot.sandbox.slack.workspace import Message
from bot.slack.blocks import render
from bot.store import audit
from tests.e2e.conftest import Agents, Bot, all_text, button_values
from tests.support.poll import eventually


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _state(bot: Bot, rid: str, want: State) -> Any:
    async def probe() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == want else None

    return await eventually(probe)


async def test_approve_by_reply_on_an_api_card_is_audited_as_a_reply(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 40})
    ch, ts = await bot.message_of(rid)
    reply = await bot.emu.post("UALICE", ch, "LGTM", thread_ts=ts)
    req = await _state(bot, rid, State.APPROVED)
    assert [a.actor for a in req.approvals] == ["UALICE"]
    entry = next(e for e in await audit.entries(bot.redis, rid) if e.event == "approve")
    assert entry.via == f"thread_reply:{ch}:{reply.ts}" and entry.actor == "UALICE"

    async def card_closed() -> bool:
        card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
        return not button_values(card.blocks) and "Approved" in all_text(card.blocks)

    await eventually(card_closed)


async def test_reject_by_reply_keeps_the_reason_and_a_known_code(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 40})
    ch, ts = await bot.message_of(rid)
    await bot.emu.post("UBOB", ch, "reject: wrong_target, that is order A2", thread_ts=ts)
    req = await _state(bot, rid, State.CANCELLED)
    assert req.resolution is not None and req.resolution.event == Event.REJECT
    assert req.resolution.reason_code == "wrong_target"
    assert req.resolution.text == "wrong_target, that is order A2"
    other = await bot.propose("refund", {"amount": 41})
    ch2, ts2 = await bot.message_of(other)
    await bot.emu.post("UBOB", ch2, "<@UBOT> no: too late in the day", thread_ts=ts2)
    req = await _state(bot, other, State.CANCELLED)
    assert req.resolution is not None and req.resolution.reason_code == "other"


async def test_quorum_of_two_with_one_click_and_one_reply(bot: Bot) -> None:
    rid = await bot.propose("deploy", {"service": "api", "version": "2.0.0"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    await bot.emu.post("UBOB", ch, "approve", thread_ts=ts)
    req = await _state(bot, rid, State.APPROVED)
    assert [a.actor for a in req.approvals] == ["UALICE", "UBOB"]


async def test_replies_from_a_non_approver_and_from_the_requester_are_refused(bot: Bot) -> None:
    # Above 1000 a refund is high risk: only SAPPROVERS (alice, bob) and UKID may decide.
    rid = await bot.propose("refund", {"amount": 5000}, on_behalf_of="UALICE")
    ch, ts = await bot.message_of(rid)
    await bot.emu.post("UCAROL", ch, "yes", thread_ts=ts)
    await bot.emu.post("UALICE", ch, "approve", thread_ts=ts)

    async def both_told() -> bool:
        carol = [e.text for e in bot.emu.ephemerals("UCAROL")]
        alice = [e.text for e in bot.emu.ephemerals("UALICE")]
        return any("not among its approvers" in t for t in carol) and any(
            "asked for by you" in t for t in alice
        )

    await eventually(both_told)
    assert all(e.thread_ts == ts for e in bot.emu.ephemerals("UCAROL"))
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    refused = [e for e in await audit.entries(bot.redis, rid) if e.kind == "refused"]
    assert {e.actor for e in refused} == {"UCAROL", "UALICE"}
    assert all(e.via and e.via.startswith("thread_reply:") for e in refused)
    assert await bot.steering.pending("nothing") == 0  # a refused keyword is not steering


async def test_a_reply_posted_before_an_edit_is_refused_as_stale(bot: Bot) -> None:
    rid = await bot.propose("deploy", {"service": "api", "version": "1.0.0"})
    ch, ts = await bot.message_of(rid)
    channel = bot.emu.workspace.channels[ch]

    # Bob's "approve" is posted, then Alice edits the call before the bot reads Bob's reply.
    reply = bot.emu.workspace.add_message(
        Message(ch, bot.emu.ids.ts(), "approve", "UBOB", thread_ts=ts, client_msg_id=str(uuid4()))
    )
    bot.clock.advance(2000)
    req = await bot.requests.get(rid)
    await bot.requests.transition(
        rid,
        Decision(
            event=Event.EDIT_AND_APPROVE,
            actor="UALICE",
            payload_hash=req.payload_hash,
            new_args={"service": "api", "version": "9.9.9"},
        ),
    )
    envelope = bot.emu.payloads.envelope(bot.emu.payloads.message_event(reply, channel))
    assert (await bot.emu.deliverer.send_event(envelope)).ok

    async def told() -> bool:
        return any("changed after you looked" in e.text for e in bot.emu.ephemerals("UBOB"))

    await eventually(told)
    req = await bot.requests.get(rid)
    assert req.state == State.PENDING_REVIEW and [a.actor for a in req.approvals] == ["UALICE"]


async def test_two_pending_cards_in_one_thread_ask_for_the_buttons(bot: Bot) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    # both the run's own (filed as its worker files them): a reply may decide either
    first = await bot.propose("refund", {"amount": 1}, run_id=run_id, owner=WORKER)
    second = await bot.propose("refund", {"amount": 2}, run_id=run_id, owner=WORKER)
    await bot.message_of(first)
    await bot.message_of(second)
    await bot.emu.post("UALICE", ch, "approve", thread_ts=home)

    async def asked() -> bool:
        return any("use the buttons" in m.text for m in bot.emu.replies(ch, home))

    await eventually(asked)
    for rid in (first, second):
        assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW


async def test_on_a_runs_card_a_reply_decides_and_yes_but_is_a_correction(
    bot: Bot, agents: Agents
) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))

    async def question() -> bool:
        return any(
            "Is this the one?" in m.text + all_text(m.blocks) for m in bot.emu.replies(ch, home)
        )

    await eventually(question, timeout_s=15)
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)  # answers the question
    bear = await eventually(lambda: _waiting(bot, run_id), timeout_s=15)
    await bot.emu.post("UPARENT", ch, "yes, but to the penguin", thread_ts=home)
    req = await _state(bot, bear, State.CANCELLED)
    assert req.resolution is not None and req.resolution.reason_code == "superseded"
    penguin = await eventually(lambda: _waiting(bot, run_id, other_than=bear), timeout_s=15)
    assert (await bot.requests.get(penguin)).args.get("target") == "penguin"
    await bot.message_of(penguin)  # a reply decides only a card posted before it
    await bot.emu.post("UPARENT", ch, ":white_check_mark:", thread_ts=home)
    done = await _state(bot, penguin, State.COMPLETED)
    assert [a.actor for a in done.approvals] == ["UPARENT"]


async def _waiting(bot: Bot, run_id: str, other_than: str | None = None) -> str | None:
    run = await bot.runs.get(run_id)
    rid = run.waiting_on
    if not rid or is_question_id(rid) or rid == other_than:
        return None
    return rid if (await bot.requests.get(rid)).state == State.PENDING_REVIEW else None


async def test_a_slack_retry_of_the_same_reply_acts_once(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 5000})  # high: carol may not decide
    ch, ts = await bot.message_of(rid)
    channel = bot.emu.workspace.channels[ch]
    reply = bot.emu.workspace.add_message(
        Message(ch, bot.emu.ids.ts(), "approve", "UCAROL", thread_ts=ts, client_msg_id="m-1")
    )
    envelope = bot.emu.payloads.envelope(bot.emu.payloads.message_event(reply, channel))
    for _ in range(2):  # Slack's retry: the same event_id again
        assert (await bot.emu.deliverer.send_event(envelope)).ok
    await bot.emu.post("UCAROL", ch, "deny", thread_ts=ts)  # a later, distinct reply

    async def refused_twice() -> list[Any] | None:
        trail = [e for e in await audit.entries(bot.redis, rid) if e.kind == "refused"]
        return trail if len(trail) >= 2 else None

    async def told_twice() -> bool:
        return len(bot.emu.ephemerals("UCAROL")) >= 2

    trail = await eventually(refused_twice)
    await eventually(told_twice)
    # Both replies were refused once each and the retry added nothing. Two distinct
    # replies are handled as they arrive, each after its ack, so either may land first.
    assert sorted(e.event for e in trail) == ["approve", "reject"]
    assert len(bot.emu.ephemerals("UCAROL")) == 2
