"""Whose work a Slack thread may touch: a run's card goes where its tier is reviewed,
and a reply in a run's thread decides only the run's own requests."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from bot.core.ids import is_question_id
from bot.core.models import RunState
from bot.core.states import State
from bot.slack.blocks import render
from tests.e2e.conftest import Agents, Bot, all_text, button_values
from tests.support.poll import eventually

TOKEN_A, TOKEN_B = "agent-a-token-0d1e2f3a", "agent-b-token-4b5c6d7e"
REVIEW = "CHITLAPPROVALS"  # the id of #hitl-approvals, every tier's review channel here


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_api_tokens": f"agent-a={TOKEN_A},agent-b={TOKEN_B}"}


async def _reply_with(bot: Bot, ch: str, ts: str, needle: str) -> Any:
    async def probe() -> Any:
        found = [m for m in bot.emu.replies(ch, ts) if needle in (m.text + all_text(m.blocks))]
        return found[-1] if found else None

    return await eventually(probe, timeout_s=15)


async def _waiting_request(bot: Bot, run_id: str) -> str | None:
    rid = (await bot.runs.get(run_id)).waiting_on
    return rid if rid and not is_question_id(rid) else None


async def _to_the_approval(bot: Bot, channel: str) -> tuple[str, str, str, str]:
    """A kid starts the claw run in `channel` and answers its question; the run then
    waits for the drop to be approved. (channel id, thread ts, run id, request id)"""
    posted = await bot.emu.post("UKID", channel, "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    await _reply_with(bot, ch, home, "Is this the one?")
    await bot.emu.post("UKID", ch, "yes, that one!", thread_ts=home)
    rid = await eventually(lambda: _waiting_request(bot, run_id), timeout_s=15)
    return ch, home, run_id, rid


async def test_a_runs_card_goes_to_the_review_channel_and_the_thread_links_it(
    bot: Bot, agents: Agents
) -> None:
    ch, home, run_id, rid = await _to_the_approval(bot, "#general")
    card_ch, card_ts = await bot.message_of(rid)
    assert card_ch == REVIEW != ch
    card = next(m for m in bot.emu.messages(REVIEW) if m.ts == card_ts)  # not in a thread
    assert render.ACTION_APPROVE in button_values(card.blocks)
    link = await _reply_with(bot, ch, home, "waits for review")
    assert f"<#{REVIEW}>" in link.text and "drop_claw" in link.text
    # #general never shows the buttons: its people are not the tier's reviewers.
    assert not any(button_values(m.blocks) for m in bot.emu.replies(ch, home))
    assert not any(button_values(m.blocks) for m in bot.emu.messages(ch))
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=REVIEW, ts=card_ts)

    async def finished() -> bool:
        return (await bot.runs.get(run_id)).state == RunState.FINISHED

    await eventually(finished, timeout_s=15)


async def test_in_the_review_channel_the_card_stays_in_the_runs_thread(
    bot: Bot, agents: Agents
) -> None:
    ch, home, _, rid = await _to_the_approval(bot, "#hitl-approvals")
    card_ch, card_ts = await bot.message_of(rid)
    card = next(m for m in bot.emu.replies(ch, home) if m.ts == card_ts)
    assert card_ch == ch and render.ACTION_APPROVE in button_values(card.blocks)
    assert not any("waits for review" in m.text for m in bot.emu.replies(ch, home))


async def test_a_reply_in_a_runs_thread_decides_only_the_runs_own_request(
    bot: Bot, agents: Agents
) -> None:
    ch, home, run_id, bear = await _to_the_approval(bot, "#hitl-approvals")
    await bot.message_of(bear)
    # Over the API no other identity may file under the worker's run at all...
    async with httpx.AsyncClient(base_url=bot.url) as api:
        for token in ("api-token-0123456789", TOKEN_B):
            filed = await api.post(
                "/v1/approvals",
                json={"tool": "refund", "args": {"amount": 5}, "run_id": run_id},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert filed.status_code == 404
    # ...but code with the store in hand can: its card lands in the same thread.
    other = await bot.propose("refund", {"amount": 5}, run_id=run_id, requester="agent-b")
    other_ch, other_ts = await bot.message_of(other)
    assert other_ch == ch and any(m.ts == other_ts for m in bot.emu.replies(ch, home))
    await bot.emu.post("UPARENT", ch, "approve", thread_ts=home)

    async def decided() -> bool:
        return (await bot.requests.get(bear)).state != State.PENDING_REVIEW

    await eventually(decided, timeout_s=15)
    bear_req = await bot.requests.get(bear)
    assert [a.actor for a in bear_req.approvals] == ["UPARENT"]
    stray = await bot.requests.get(other)
    assert stray.state == State.PENDING_REVIEW and stray.approvals == ()
