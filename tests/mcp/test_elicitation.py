"""An upstream server's elicitation through `hitl-bot mcp proxy`: asked in Slack as a
question whose lines follow the requested schema, answered, declined or left unanswered,
and the person's answer goes back to the server (an upstream built on the official SDK)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client
from mcp_types import TextContent

from bot.mcp.elicit import NotFitting, content_of
from bot.slack.blocks.options import ACTION_OPTION
from tests.e2e.conftest import Bot, all_text, button_values
from tests.support.poll import eventually

SCHEMA = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "the day"},
        "guests": {"type": "integer"},
        "window": {"type": "boolean"},
    },
    "required": ["date", "guests"],
}


def text(result: Any) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def asked(bot: Bot, words: str, *, after: int = 0) -> Any:
    def card() -> Any:
        tops = bot.emu.messages("#hitl-approvals")
        every = [*tops, *(r for m in tops for r in bot.emu.replies(m.channel, m.ts))]
        found = [m for m in every if words in all_text(m.blocks)]
        return found[after] if len(found) > after else None

    return await eventually(card, what=f"the question {words!r}", timeout_s=20)


async def test_a_form_is_asked_in_slack_and_the_answer_goes_back(proxy: Client, bot: Bot) -> None:
    call = asyncio.create_task(proxy.call_tool("demo__book", {"room": "Blue"}))
    card = await asked(bot, "Booking Blue: which day, for how many?")
    shown = all_text(card.blocks)
    assert "date (string, required): the day, YYYY-MM-DD" in shown
    assert "guests (integer, required)" in shown and "window (boolean)" in shown
    # a reply that does not fit is asked again, saying what was wrong: nothing is dropped
    thread = card.thread_ts or card.ts
    await bot.emu.post("UALICE", card.channel, "date: 2027-01-04\nguests: four", thread_ts=thread)
    again = await asked(bot, "guests must be a whole number", after=0)
    assert "Booking Blue" in all_text(again.blocks)
    await bot.emu.post(
        "UALICE",
        again.channel,
        "date: 2027-01-04\nguests: 4\nwindow: yes",
        thread_ts=again.thread_ts or again.ts,
    )
    result = await asyncio.wait_for(call, 20)
    assert text(result) == "booked Blue on 2027-01-04 for 4 by the window"


async def test_a_decline_goes_back_as_a_decline(proxy: Client, bot: Bot) -> None:
    call = asyncio.create_task(proxy.call_tool("demo__book", {"room": "Red"}))
    card = await asked(bot, "Booking Red")
    await bot.emu.post("UALICE", card.channel, "decline", thread_ts=card.thread_ts or card.ts)
    assert text(await asyncio.wait_for(call, 20)) == "not booked: decline"


async def test_a_single_yes_or_no_is_offered_as_buttons(proxy: Client, bot: Bot) -> None:
    call = asyncio.create_task(proxy.call_tool("demo__wipe", {}))
    card = await asked(bot, "Wipe the scratch disk?")
    buttons = button_values(card.blocks)
    assert [f"{ACTION_OPTION}_{i}" in buttons for i in range(3)] == [True, True, True]
    await bot.emu.click("UALICE", f"{ACTION_OPTION}_0", channel=card.channel, ts=card.ts)
    assert text(await asyncio.wait_for(call, 20)) == "wiped"


def test_an_answer_is_read_against_the_schema() -> None:
    assert content_of(SCHEMA, "date: 2027-01-04\nguests: 2") == {
        "date": "2027-01-04",
        "guests": 2,
    }
    assert content_of(SCHEMA, "• date: x\n• guests: 3\n• window: no")["window"] is False
    for bad, why in [
        ("date: x", "guests is required"),
        ("date: x\nguests: 2.5", "guests must be a whole number"),
        ("date: x\nguests: 2\nwindow: perhaps", "window must be yes or no"),
        ("date: x\nguests: 2\ncolour: red", "colour is not a field"),
    ]:
        try:
            content_of(SCHEMA, bad)
        except NotFitting as exc:
            assert why in str(exc)
        else:
            raise AssertionError(f"{bad!r} was taken")
