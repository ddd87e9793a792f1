"""People approving, rejecting and editing through the Slack emulator, end to end."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from bot.core.states import State
from bot.slack.blocks import render
from bot.store import audit
from tests.e2e.conftest import Bot, all_text, button_values
from tests.support.poll import eventually


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    """Every test here runs once with Slack over HTTP and once over Socket Mode."""
    return str(request.param)


def _msg(bot: Bot, ch: str, ts: str) -> Any:
    return next(m for m in bot.emu.messages(ch) if m.ts == ts)


async def _state(bot: Bot, rid: str, want: State) -> Any:
    async def probe() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == want else None

    return await eventually(probe)


async def test_exact_call_posted_and_approve_updates_the_message(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 250, "currency": "EUR", "to": "cust-42"})
    ch, ts = await bot.message_of(rid)
    seen = copy.deepcopy(_msg(bot, ch, ts).blocks)
    shown = all_text(seen)
    assert "refund" in shown and "cust-42" in shown and "250" in shown and "EUR" in shown
    assert "<!date^" in shown  # the deadline, in each viewer's own time zone
    assert set(button_values(seen)) >= {render.ACTION_APPROVE, render.ACTION_REJECT}

    out = await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    assert out.status == 200
    req = await _state(bot, rid, State.APPROVED)
    assert req.resolution is not None and req.resolution.actor == "UALICE"

    await eventually(lambda: _no_buttons(bot, ch, ts))
    lines = await eventually(lambda: _replies(bot, ch, ts))
    assert any("UALICE" in m.text for m in lines)
    trail = await audit.entries(bot.redis, rid)
    approved = next(e for e in trail if e.event == "approve")
    assert approved.view_hash == render.blocks_hash(seen)  # what Alice saw


async def _no_buttons(bot: Bot, ch: str, ts: str) -> bool:
    return not button_values(_msg(bot, ch, ts).blocks)


async def _replies(bot: Bot, ch: str, ts: str) -> list[Any]:
    return bot.emu.replies(ch, ts)


async def test_reject_opens_modal_and_needs_a_reason(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "penguin"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UKID", render.ACTION_REJECT, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UKID"))
    assert view.definition["callback_id"] == render.VIEW_REJECT
    out = await bot.emu.submit(
        "UKID",
        view.id,
        {
            render.REASON_BLOCK: {render.REASON_ACTION: "wrong_target"},
            render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: "I wanted the bear"},
        },
    )
    assert out.view_action == "closed", out
    req = await _state(bot, rid, State.CANCELLED)
    assert req.resolution is not None
    assert (req.resolution.reason_code, req.resolution.text) == (
        "wrong_target",
        "I wanted the bear",
    )
    await eventually(lambda: _no_buttons(bot, ch, ts))


async def _view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)


async def test_edit_and_approve_with_json_errors_shown_in_the_modal(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 900, "to": "cust-1"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UBOB", render.ACTION_EDIT, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UBOB"))
    bad = await bot.emu.submit(
        "UBOB", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: '{"amount": 90, '}}
    )
    assert bad.view_action == "errors" and "JSON" in json.dumps(bad.errors)
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    good = await bot.emu.submit(
        "UBOB", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: '{"amount": 90, "to": "cust-1"}'}}
    )
    assert good.view_action == "closed", good
    req = await _state(bot, rid, State.APPROVED)
    assert req.args == {"amount": 90, "to": "cust-1"} and req.original_hash is not None


async def test_quorum_of_two_through_slack(bot: Bot) -> None:
    rid = await bot.propose("deploy", {"service": "api", "version": "1.2.3"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def one_of_two() -> bool:
        return "1 of 2" in all_text(_msg(bot, ch, ts).blocks)

    await eventually(one_of_two)
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    await bot.emu.click("UBOB", render.ACTION_APPROVE, channel=ch, ts=ts)
    req = await _state(bot, rid, State.APPROVED)
    assert [a.actor for a in req.approvals] == ["UALICE", "UBOB"]


async def test_expiry_escalates_to_the_next_level_with_a_dm(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    ch, ts = await bot.message_of(rid)
    bot.clock.advance(10 * 60_000)  # the review timeout passes; the sweeper fires

    async def escalated() -> Any:
        req = await bot.requests.get(rid)
        return req if req.level == 1 else None

    req = await eventually(escalated)
    assert req.state == State.PENDING_REVIEW and req.assignees.users == ("UPARENT",)

    async def dm() -> Any:
        return [
            m for c in bot.emu.state()["channels"] if c["id"].startswith("D") for m in c["messages"]
        ]

    dms = await eventually(dm)
    assert any(rid in json.dumps(m) for m in dms)
    oncall = await eventually(lambda: _list(bot.emu.messages("#hitl-oncall")))
    assert any(rid in all_text(m.blocks) or rid in m.text for m in oncall)
    # The parent approves from the escalation; a late click on the old level still works
    # because the request is still pending, now at level 2.
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=ts)
    await _state(bot, rid, State.APPROVED)
    bot.clock.advance(60 * 60_000)


async def _list(x: list[Any]) -> list[Any]:
    return x


async def test_click_after_expiry_is_told_what_the_default_did(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    await bot.message_of(rid)
    bot.clock.advance(10 * 60_000)  # level 1 times out: escalated, the parent gets a DM

    async def dm() -> Any:
        return [
            (c["id"], m["ts"])
            for c in bot.emu.state()["channels"]
            if c["id"].startswith("D")
            for m in c["messages"]
            if rid in json.dumps(m)
        ]

    dm_channel, dm_ts = (await eventually(dm))[0]
    # Every message loses its buttons once the request is decided; while Slack refuses
    # that update, a click on the stale DM must still be refused and say what happened.
    bot.emu.add_fault(500, 1_000, method="chat.update")
    bot.clock.advance(10 * 60_000)  # the last level passes too: the policy default
    await _state(bot, rid, State.AUTO_REJECTED)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=dm_channel, ts=dm_ts)

    async def told() -> Any:
        return [e.text for e in bot.emu.ephemerals("UPARENT")]

    texts = await eventually(told)
    assert any("auto" in t.lower() and "reject" in t.lower() for t in texts), texts
    trail = await audit.entries(bot.redis, rid)
    assert trail[-1].kind == "refused" and trail[-1].actor == "UPARENT"
    bot.emu.faults.clear()  # Slack recovers: the DM is brought up to date, buttons gone
    await eventually(lambda: _no_buttons(bot, dm_channel, dm_ts))


async def test_lost_message_does_not_block_escalation_or_later_posts(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    await bot.message_of(rid)
    await bot.emu.reset()  # the workspace forgets the message (Slack answers message_not_found)
    bot.clock.advance(10 * 60_000)

    async def dm() -> Any:
        return [
            m
            for c in bot.emu.state()["channels"]
            if c["id"].startswith("D")
            for m in c["messages"]
            if rid in json.dumps(m)
        ]

    await eventually(dm)  # the parent is still told, although the old message is gone
    later = await bot.propose("refund", {"amount": 8, "to": "cust-8"})
    await bot.message_of(later)  # and the next request is posted, not stuck behind retries


async def test_each_transition_gets_one_thread_line(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 9, "to": "cust-9"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    await _state(bot, rid, State.APPROVED)
    from bot.core.models import Decision
    from bot.core.states import Event

    for ev in (Event.CLAIM, Event.SUCCEED):
        await bot.requests.transition(rid, Decision(event=ev, actor="worker"))

    async def three_lines() -> list[Any]:
        lines = bot.emu.replies(ch, ts)
        return lines if len(lines) >= 3 else []

    lines = await eventually(three_lines)
    await bot.emu.settle()
    texts = [m.text for m in bot.emu.replies(ch, ts)]
    assert len(texts) == 3, texts  # approved, executing, completed: once each
    assert len(set(texts)) == 3
    assert lines
