"""Whole runs through Slack: a mention starts the agent, the thread answers, steers, stops."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.core.models import RunState
from bot.core.states import State
from bot.slack.blocks import render
from tests.e2e.conftest import Agents, Bot, all_text, button_values
from tests.support.poll import eventually


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    """Every test here runs once with Slack over HTTP and once over Socket Mode."""
    return str(request.param)


async def _thread(bot: Bot, ch: str, ts: str) -> list[Any]:
    return bot.emu.replies(ch, ts)


async def _reply_with(bot: Bot, ch: str, ts: str, needle: str) -> Any:
    async def probe() -> Any:
        found = [m for m in bot.emu.replies(ch, ts) if needle in (m.text + all_text(m.blocks))]
        return found[-1] if found else None

    return await eventually(probe, timeout_s=15)


async def test_mention_question_answer_approval_and_prize(bot: Bot, agents: Agents) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    question = await _reply_with(bot, ch, home, "Is this the one?")
    await bot.emu.post("UKID", ch, "yes, that one!", thread_ts=home)

    approval = await _reply_with(bot, ch, home, "drop_claw")
    assert render.ACTION_APPROVE in button_values(approval.blocks)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=approval.ts)

    async def finished() -> Any:
        run = await bot.runs.get(run_id)
        return run if run.state == RunState.FINISHED else None

    run = await eventually(finished, timeout_s=15)
    assert "bear" in (run.result or "")
    await _reply_with(bot, ch, home, "Got it")
    assert question is not None
    # The thread reads in the order things happened: the moves, then the question.
    texts = [m.text + all_text(m.blocks) for m in bot.emu.replies(ch, home)]
    moves = [i for i, t in enumerate(texts) if "move_claw" in t]
    asked = next(i for i, t in enumerate(texts) if "Is this the one?" in t)
    assert moves and max(moves) < asked, texts


async def test_thread_reply_steers_the_next_tool_call(bot: Bot, agents: Agents) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    await _reply_with(bot, ch, home, "Is this the one?")
    # While the agent waits for the answer, the kid changes her mind in the thread.
    await bot.emu.post("UKID", ch, "No, wait! The penguin!", thread_ts=home)
    approval = await _reply_with(bot, ch, home, "penguin")
    await eventually(lambda: _with_buttons(bot, ch, home))
    approval = (await _with_buttons(bot, ch, home))[-1]
    assert "penguin" in all_text(approval.blocks)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=approval.ts)

    async def finished() -> Any:
        run = await bot.runs.get(run_id)
        return run if run.state == RunState.FINISHED else None

    run = await eventually(finished, timeout_s=15)
    assert "penguin" in (run.result or "")


async def _with_buttons(bot: Bot, ch: str, ts: str) -> list[Any]:
    return [
        m
        for m in bot.emu.replies(ch, ts)
        if render.ACTION_APPROVE in button_values(m.blocks) and "drop_claw" in all_text(m.blocks)
    ]


async def test_correction_during_an_approval_withdraws_it_and_reaches_the_agent(
    bot: Bot, agents: Agents
) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    await eventually(lambda: bot.runs.by_thread(ch, home))
    await _reply_with(bot, ch, home, "Is this the one?")
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)
    approval = (await eventually(lambda: _with_buttons(bot, ch, home)))[-1]
    # A reply while the drop waits for approval is a correction: queued (eyes)...
    correction = "No, wait! The penguin!"
    note = await bot.emu.post("UPARENT", ch, correction, thread_ts=home)

    async def reacted(name: str) -> bool:
        msg = next(m for m in bot.emu.replies(ch, home) if m.ts == note.ts)
        return name in msg.reactions

    await eventually(lambda: reacted("eyes"))

    # ...the waiting drop is withdrawn (nobody can approve the bear any more)...
    async def withdrawn() -> bool:
        card = next(m for m in bot.emu.replies(ch, home) if m.ts == approval.ts)
        return render.ACTION_APPROVE not in button_values(card.blocks)

    await eventually(withdrawn)
    # ...and the correction is handed to the agent in its place (a check mark)...
    await eventually(lambda: reacted("white_check_mark"))

    # ...which reads it: the model is sent the person's words.
    def read_by_the_model() -> bool:
        return any(correction in json.dumps(r.get("messages")) for r in agents.model.requests)

    await eventually(read_by_the_model, what="the correction in a request to the model")


async def test_hitl_stop_ends_the_run_and_withdraws_its_approval(bot: Bot, agents: Agents) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    await _reply_with(bot, ch, home, "Is this the one?")
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)
    await eventually(lambda: _with_buttons(bot, ch, home))
    waiting = (await bot.runs.get(run_id)).waiting_on
    out = await bot.emu.command("UPARENT", ch, "/hitl", f"stop {run_id}")
    assert out.status == 200

    async def stopped() -> Any:
        run = await bot.runs.get(run_id)
        return run if run.state == RunState.STOPPED else None

    await eventually(stopped, timeout_s=15)
    assert waiting is not None
    assert (await bot.requests.get(waiting)).state == State.CANCELLED
