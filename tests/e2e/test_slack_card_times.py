"""What an edited card and a short deadline show, through the emulator: the edit beside
what the agent asked for, and a 45-second window to the second."""

from __future__ import annotations

import copy
from typing import Any

from bot.core.policy import parse_policy
from bot.slack.blocks import render
from tests.e2e import conftest
from tests.e2e.conftest import Bot, all_text
from tests.support.poll import eventually


async def _card_saying(bot: Bot, ch: str, ts: str, words: str) -> str:
    def shown() -> str | None:
        text = all_text(next(m for m in bot.emu.messages(ch) if m.ts == ts).blocks)
        return text if words in text else None

    return await eventually(shown, what=f"the card saying {words!r}")


async def test_an_edited_card_shows_what_the_agent_asked_for(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 4200, "to": "cust-1"})  # high: UKID decides
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UKID", render.ACTION_EDIT, channel=ch, ts=ts)

    async def opened() -> Any:
        view = bot.emu.open_view("UKID")
        return view if view and view.definition["callback_id"] == render.VIEW_EDIT else None

    view = await eventually(opened, what="the Edit modal")
    edit = '{"amount": 900, "to": "cust-1"}'
    out = await bot.emu.submit("UKID", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: edit}})
    assert out.view_action != "errors", out
    text = await _card_saying(bot, ch, ts, "asked")
    assert "`900` (asked: ~`4,200`~)" in text, text  # the decision field, both values
    assert "The agent asked for: `amount` ~`4,200`~" in text  # and said once, in words
    assert "`to` ~" not in text  # what the edit kept is not repeated


async def test_a_45_second_window_is_shown_to_the_second(bot: Bot) -> None:
    policy = copy.deepcopy(conftest.POLICY)
    policy["tiers"]["medium"]["review_timeout"] = "45s"
    made = await bot.requests.create(
        parse_policy(policy), tool="refund", args={"amount": 40}, requester="agent:test"
    )
    ch, ts = await bot.message_of(made.request.id)
    text = await _card_saying(bot, ch, ts, "Decide by")
    assert "at {time_secs}|" in text, text
    slow = await bot.propose("refund", {"amount": 41})  # the fixture's 10 minutes
    ch, ts = await bot.message_of(slow)
    text = await _card_saying(bot, ch, ts, "Decide by")
    assert "at {time}|" in text and "{time_secs}" not in text
