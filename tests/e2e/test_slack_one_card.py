"""One card per request (and one escalation DM, one question) when the bot never learns
that Slack took its post.

The emulator stores the card but holds the answer past the bot's Slack client timeout
(serve's 10 s, made 3 s here so each case does not wait ten seconds for it):
the bot saves no ts, exactly as when the process dies in that window. The retried
notice must adopt that card (tagged with the request in its metadata) rather than post
a second one whose twin keeps live buttons forever. (A real `kill -9` in the same window
is in tests/scale/test_one_card_kill.py.)
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.sandbox.cards import cards, cards_per_request, live_cards_per_request
from bot.sandbox.slack import Message
from bot.slack.blocks import render
from bot.store import keys
from tests.e2e.conftest import Bot, button_values
from tests.support.poll import eventually

SLACK_TIMEOUT_S = 3
LOST = SLACK_TIMEOUT_S + 2.0  # past the bot's Web API timeout


@pytest.fixture
def serve_options() -> dict[str, Any]:
    return {"slack_timeout_s": SLACK_TIMEOUT_S}


async def _held(bot: Bot) -> None:
    await eventually(lambda: bot.emu.faults.held >= 1, what="the card posted, its answer held")


async def test_a_lost_answer_leaves_one_card_and_its_buttons_work(bot: Bot) -> None:
    bot.emu.add_delay(LOST, method="chat.postMessage")
    rid = await bot.propose("drop_claw", {"x": 3})
    await _held(bot)
    ch, ts = await bot.message_of(rid, timeout_s=30)
    state = bot.emu.state()
    assert cards_per_request(state)[rid] == 1, cards(state)
    assert [c.ts for c in cards(state) if c.request_id == rid] == [ts]
    assert bot.emu.calls.count("chat.postMessage") == 1

    out = await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    assert out.status == 200

    async def approved() -> bool:
        req = await bot.requests.get(rid)
        return req.state == State.APPROVED and live_cards_per_request(bot.emu.state())[rid] == 0

    await eventually(approved)
    assert cards_per_request(bot.emu.state())[rid] == 1


async def test_a_card_whose_request_was_decided_meanwhile_loses_its_buttons(bot: Bot) -> None:
    bot.emu.add_delay(LOST, method="chat.postMessage")
    rid = await bot.propose("drop_claw", {"x": 4})
    await _held(bot)
    req = await bot.requests.get(rid)
    await bot.requests.transition(
        rid, Decision(event=Event.APPROVE, actor="UALICE", payload_hash=req.payload_hash)
    )

    async def settled() -> bool:
        state = bot.emu.state()
        ts = await bot.redis.hget(keys.request(rid), "msg_ts")
        return (
            bool(ts)
            and cards_per_request(state)[rid] == 1
            and not live_cards_per_request(state)[rid]
        )

    await eventually(settled, timeout_s=30)
    (card,) = [c for c in cards(bot.emu.state()) if c.request_id == rid]
    shown = next(m for m in bot.emu.messages(card.channel) if m.ts == card.ts)
    assert "approved" in shown.text.lower()


async def test_a_lost_answer_to_an_escalation_dm_leaves_one_dm(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"x": 5})
    await bot.message_of(rid)
    bot.emu.add_delay(LOST, method="chat.postMessage")  # the DM to UPARENT goes first
    bot.clock.advance(10 * 60_000)  # the review timeout passes: level 2 is told
    await _held(bot)

    def dms() -> list[Message]:
        return [
            m
            for c in bot.emu.workspace.channels.values()
            if c.kind == "im"
            for m in c.top_level()
            if rid in m.text or rid in str(m.blocks)
        ]

    async def recorded() -> bool:
        posts = await bot.redis.hgetall(keys.posts(rid))
        return any(f.endswith(":done") for f in posts)

    await eventually(recorded, timeout_s=30)
    (dm,) = dms()
    assert cards_per_request(bot.emu.state())[rid] == 1  # escalation posts are not cards
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=dm.channel, ts=dm.ts)

    async def settled() -> bool:
        req = await bot.requests.get(rid)
        shown = dms()
        return (
            req.state == State.APPROVED and len(shown) == 1 and not button_values(shown[0].blocks)
        )

    await eventually(settled)


async def test_a_lost_answer_to_a_question_post_leaves_one_question(bot: Bot) -> None:
    bot.emu.add_delay(LOST, method="chat.postMessage")
    q = await bot.questions.ask("Which bear?", timeout_ms=600_000, channel="#hitl-approvals")
    await _held(bot)

    async def saved() -> str | None:
        return await bot.redis.hget(keys.question(q.id), "msg_ts")

    ts = await eventually(saved, timeout_s=30)
    shown = [m for m in bot.emu.messages("hitl-approvals") if q.id in str(m.blocks)]
    assert [m.ts for m in shown] == [ts]
