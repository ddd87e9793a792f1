"""A run's thread as the people in it read it: one folded line for the calls
without review, refusals beside the card, and a /hitl run card that follows its run."""

from __future__ import annotations

from typing import Any

from bot.core.models import RunState
from bot.slack.blocks import render
from tests.e2e.conftest import Agents, Bot, all_text, button_values
from tests.support.poll import eventually

FREE = "ran without review"


async def _card(bot: Bot, ch: str, home: str) -> Any:
    found = [
        m
        for m in bot.emu.replies(ch, home)
        if render.ACTION_APPROVE in button_values(m.blocks) and "drop_claw" in all_text(m.blocks)
    ]
    return found[-1] if found else None


async def _said(bot: Bot, ch: str, home: str, needle: str) -> Any:
    found = [m for m in bot.emu.replies(ch, home) if needle in m.text + all_text(m.blocks)]
    return found[-1] if found else None


async def test_a_burst_of_free_calls_is_one_line_with_their_arguments(
    bot: Bot, agents: Agents
) -> None:
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    await eventually(lambda: _said(bot, ch, home, "Is this the one?"), timeout_s=15)
    lines = [m.text for m in bot.emu.replies(ch, home) if FREE in m.text]
    # The claw moved more than once before it asked: one line, updated, lists every move.
    assert len(lines) == 1, lines
    assert lines[0].count("`move_claw(direction=") >= 2, lines[0]
    assert '"cm": ' not in lines[0] and "cm=" in lines[0]


async def test_a_refused_click_is_answered_in_the_cards_thread_with_mentions(
    bot: Bot, agents: Agents
) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    await eventually(lambda: _said(bot, ch, home, "Is this the one?"), timeout_s=15)
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)
    card = await eventually(lambda: _card(bot, ch, home), timeout_s=15)
    await bot.emu.click("UKID", render.ACTION_APPROVE, channel=ch, ts=card.ts)

    async def told() -> Any:
        found = [e for e in bot.emu.ephemerals("UKID") if "may not decide" in e.text]
        return found[-1] if found else None

    refusal = await eventually(told)
    assert refusal.thread_ts == home  # beside the card, not at the bottom of the channel
    assert refusal.text.startswith("🚫 <@UKID> may not decide")
    assert "UKID" not in refusal.text.replace("<@UKID>", "")  # no bare ids


async def test_the_run_card_follows_its_run_to_the_end(bot: Bot, agents: Agents) -> None:
    out = await bot.emu.command("UKID", "#general", "/hitl", "run claw Get me the bear!")
    assert out.status == 200

    async def card() -> Any:
        found = [m for m in bot.emu.messages("general") if "agent run" in all_text(m.blocks)]
        return found[-1] if found else None

    posted = await eventually(card)
    run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))

    async def shows(label: str) -> Any:
        now = next(m for m in bot.emu.messages("general") if m.ts == posted.ts)
        return now if label in all_text(now.blocks) else None

    waiting = await eventually(lambda: shows("Waiting for a person"), timeout_s=15)
    assert "*Turns*\n0" not in all_text(waiting.blocks)
    await bot.emu.command("UKID", "#general", "/hitl", f"stop {run_id}")

    async def stopped() -> Any:
        run = await bot.runs.get(run_id)
        return run if run.state == RunState.STOPPED else None

    await eventually(stopped, timeout_s=15)
    final = await eventually(lambda: shows("Stopped"), timeout_s=15)
    text = all_text(final.blocks)
    assert "Queued" not in text and "Reply in this thread" not in text


async def test_a_call_delivered_after_the_question_that_followed_it_joins_the_line_above(
    bot: Bot,
) -> None:
    """A run's calls and its question are events on different shards, so a call's event
    can be delivered after the question's: the thread must still read in event order."""
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.delivery.runlines import RunLines
    from bot.store.posted.cards import Cards
    from tests.e2e.conftest import TOKEN

    home = await bot.emu.post("UKID", "#general", "a run's home")
    run = await bot.runs.start(
        agent="claw", prompt="bear", requester="UKID", channel=home.channel, thread_ts=home.ts
    )
    client = AsyncWebClient(token=TOKEN, base_url=bot.emu.api_url)
    lines = RunLines(Cards(bot.redis), client)
    # Filed outside the run, so the bot's own notifier does not fold them in meanwhile:
    # this test is the only one delivering them, in the order it chooses.
    reqs = [await bot.requests.get(await bot.propose("move_claw", {"x": x})) for x in (1, 2, 3)]

    await lines.free_call(run, reqs[0], at=100)
    await lines.said_other(run.id, at=300)  # the question, asked after the second call
    await client.chat_postMessage(channel=home.channel, thread_ts=home.ts, text="Is this it?")
    await lines.free_call(run, reqs[1], at=200)  # delivered late: it happened before
    await lines.free_call(run, reqs[2], at=400)  # after the question: a new line

    thread = [m.text for m in bot.emu.replies(home.channel, home.ts)]
    assert len(thread) == 3, thread
    assert "x=1" in thread[0] and "x=2" in thread[0] and "x=3" not in thread[0]
    assert thread[1] == "Is this it?"
    assert "x=3" in thread[2] and "x=2" not in thread[2]
