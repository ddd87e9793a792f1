"""A question with options: one button per option, first click wins, told who chose.

The real bot behind the Slack emulator, the question asked over the real HTTP API (and
through the SDK), answered by clicks and by thread replies."""

from __future__ import annotations

from typing import Any

import httpx

from bot.core.models import QuestionState, RunState
from bot.sdk import Gate
from bot.slack.blocks.options import ACTION_OPTION
from tests.e2e.conftest import Bot, all_text, button_values
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}
REVIEW = "#hitl-approvals"


async def _card(bot: Bot, qid: str, channel: str = REVIEW, thread: str | None = None) -> Any:
    def found() -> Any:
        msgs = bot.emu.replies(channel, thread) if thread else bot.emu.messages(channel)
        return next((m for m in msgs if qid in all_text(m.blocks)), None)

    return await eventually(found, what=f"the card of {qid}")


async def _home(bot: Bot, run_id: str) -> tuple[str, str]:
    """The run's home thread, once serve has posted it: (channel, thread ts)."""

    async def home() -> tuple[str, str] | None:
        r = await bot.runs.get(run_id)
        return (r.channel, r.thread_ts) if r.channel and r.thread_ts else None

    return await eventually(home, what="the run's home thread")


async def test_options_are_buttons_first_click_wins_and_the_api_says_who(bot: Bot) -> None:
    options = ["Refund A1", "Refund A2", "<!channel> neither"]
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        made = await api.post(
            "/v1/questions", json={"question": "Which order?", "options": options}
        )
        assert made.status_code == 201
        q = made.json()
        assert q["options"] == options
        card = await _card(bot, q["id"])
        buttons = button_values(card.blocks)
        shown = [
            el["text"]["text"]
            for b in card.blocks
            if b.get("type") == "actions"
            for el in b["elements"]
        ]
        assert shown == options  # plain_text buttons: Slack parses no mention in them
        assert "hitl_answer" not in buttons  # no free-text answer beside the options
        # Slack still shows Bob the buttons while the card is being updated: hold the update.
        bot.emu.add_fault(500, 1_000, method="chat.update")
        await bot.emu.click("UALICE", f"{ACTION_OPTION}_1", channel=card.channel, ts=card.ts)
        got = (await api.get(f"/v1/questions/{q['id']}", params={"wait": 5})).json()
        assert (got["state"], got["answer"]) == ("answered", "Refund A2")
        alice = bot.emu.workspace.find_user("UALICE")
        assert got["answered_by"] == alice.id
        # A second click changes nothing and is told who chose what.
        await bot.emu.click("UBOB", f"{ACTION_OPTION}_0", channel=card.channel, ts=card.ts)

        def told() -> str | None:
            return next((e.text for e in bot.emu.ephemerals("UBOB")), None)

        text = await eventually(told, what="Bob told the question was answered")
        assert f"<@{alice.id}>" in text and "Refund A2" in text
        again = (await api.get(f"/v1/questions/{q['id']}")).json()
        assert (again["answer"], again["answered_by"]) == ("Refund A2", alice.id)
        bot.emu.faults.clear()  # the update goes through on the notifier's retry

        def updated() -> bool:
            m = next(m for m in bot.emu.messages(REVIEW) if m.ts == card.ts)
            return not button_values(m.blocks) and "Refund A2" in all_text(m.blocks)

        await eventually(updated, what="the card shows the choice, without buttons")


async def test_bad_option_lists_are_refused_with_422(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        for options in (
            [f"o{i}" for i in range(11)],  # more than 10
            ["x" * 76],  # longer than a Slack button shows
            ["yes", "YES"],  # the same option twice
            ["ok\u202e"],  # a bidi control hides what the button says
            [" padded"],
        ):
            resp = await api.post("/v1/questions", json={"question": "?", "options": options})
            assert resp.status_code == 422, options
            assert "option" in resp.text


async def test_sdk_http_ask_with_options_returns_the_choice(bot: Bot) -> None:
    import asyncio

    gate = Gate(api_url=bot.url, api_token="api-token-0123456789")
    try:
        asking = asyncio.create_task(
            gate.ask_answer("Ship on Friday?", options=["yes", "no"], timeout=60)
        )

        async def card() -> Any:
            found = [
                m
                for m in bot.emu.messages(REVIEW)
                if "Ship on Friday?" in all_text(m.blocks) and button_values(m.blocks)
            ]
            return found[0] if found else None

        m = await eventually(card, what="the SDK's question card")
        await bot.emu.click("UBOB", f"{ACTION_OPTION}_1", channel=m.channel, ts=m.ts)
        q = await asyncio.wait_for(asking, 15)
        assert q.answer == "no" and q.answered_by == bot.emu.workspace.find_user("UBOB").id
    finally:
        await gate.aclose()


async def test_a_thread_reply_must_name_an_option_and_is_told_otherwise(bot: Bot) -> None:
    run = await bot.runs.start(
        agent="claw", prompt="pick a prize", requester="UKID", channel=REVIEW
    )

    ch, thread = await _home(bot, run.id)
    q = await bot.questions.ask(
        "Bear or penguin?", timeout_ms=600_000, run_id=run.id, options=["Bear", "Penguin"]
    )
    await bot.runs.update(run.id, state=RunState.WAITING, waiting_on=q.id)
    await _card(bot, q.id, ch, thread)
    await bot.emu.post("UKID", ch, "the giraffe", thread_ts=thread)

    def told() -> str | None:
        return next((e.text for e in bot.emu.ephemerals("UKID") if "Bear" in e.text), None)

    text = await eventually(told, what="the kid told which options there are")
    assert "Penguin" in text
    assert (await bot.questions.get(q.id)).state == QuestionState.OPEN
    assert await bot.steering.pop(run.id) is None  # not taken as a correction either
    await bot.emu.post("UKID", ch, "  penguin ", thread_ts=thread)

    async def answered() -> Any:
        got = await bot.questions.get(q.id)
        return got if got.state == QuestionState.ANSWERED else None

    got = await eventually(answered, what="the reply taken as the option")
    assert got.answer == "Penguin"
    assert got.answered_by == bot.emu.workspace.find_user("UKID").id


async def test_someone_who_may_not_answer_is_refused(bot: Bot) -> None:
    run = await bot.runs.start(agent="claw", prompt="go", requester="UKID", channel=REVIEW)

    ch, thread = await _home(bot, run.id)
    q = await bot.questions.ask("Go?", timeout_ms=600_000, run_id=run.id, options=["Go", "Stop"])
    await bot.runs.update(run.id, state=RunState.WAITING, waiting_on=q.id)
    card = await _card(bot, q.id, ch, thread)
    # UTEAM0 neither started the run nor is an approver of it
    await bot.emu.click("UTEAM0", f"{ACTION_OPTION}_0", channel=card.channel, ts=card.ts)

    def told() -> str | None:
        return next((e.text for e in bot.emu.ephemerals("UTEAM0")), None)

    await eventually(told, what="UTEAM0 told they may not answer")
    assert (await bot.questions.get(q.id)).state == QuestionState.OPEN
