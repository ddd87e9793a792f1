"""What a decided card says happened, in words, through the emulator: a chosen proposal
is a choice (never "edited"), a withdrawn call is withdrawn everywhere with a reason a
person reads, and a reply's reason is the person's words, never the code `other`."""

from __future__ import annotations

from typing import Any

import httpx

from bot.core.states import State
from bot.slack.blocks.proposals import ACTION_CHOOSE
from tests.e2e.conftest import Bot, all_text
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}


async def _card_saying(bot: Bot, ch: str, ts: str, words: str) -> str:
    def shown() -> str | None:
        text = all_text(next(m for m in bot.emu.messages(ch) if m.ts == ts).blocks)
        return text if words in text else None

    return await eventually(shown, what=f"the card saying {words!r}")


async def _thread_line(bot: Bot, ch: str, ts: str, start: str) -> str:
    def said() -> str | None:
        found = [m.text for m in bot.emu.replies(ch, ts) if m.text.startswith(start)]
        return found[-1] if found else None

    return await eventually(said, what=f"a thread line starting {start!r}")


async def test_a_chosen_candidate_reads_as_a_choice_not_an_edit(bot: Bot) -> None:
    cands: list[dict[str, Any]] = [{"order": "A-1", "amount": 5}, {"order": "A-2", "amount": 7}]
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        made = await api.post("/v1/approvals", json={"tool": "refund", "candidates": cands})
        assert made.status_code == 201, made.text
    rid = made.json()["id"]
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", f"{ACTION_CHOOSE}_1", channel=ch, ts=ts)
    text = await _card_saying(bot, ch, ts, "Approved: candidate 2 chosen by <@UALICE>")
    assert "Edited" not in text
    line = await _thread_line(bot, ch, ts, "✅ Candidate 2 chosen by <@UALICE>")
    assert "Edited" not in line


async def test_a_call_withdrawn_by_a_correction_says_withdrawn_and_why(bot: Bot) -> None:
    run = "ext:words-1"
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        made = await api.post(
            "/v1/approvals", json={"tool": "refund", "args": {"amount": 5}, "run_id": run}
        )
        rid = made.json()["id"]
        ch, ts = await bot.message_of(rid)
        steered = await api.post(f"/v1/runs/{run}/steer", json={"text": "order A2"})
        assert steered.status_code == 201, steered.text
    text = await _card_saying(bot, ch, ts, "Withdrawn by")
    head = next(b for b in next(m for m in bot.emu.messages(ch) if m.ts == ts).blocks)
    assert head["type"] == "header" and "Withdrawn" in head["text"]["text"], head
    assert "Cancelled" not in text and "`superseded`" not in text
    assert "a person corrected the agent" in text


async def test_a_reply_rejection_shows_the_persons_words_not_other(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 41})
    ch, ts = await bot.message_of(rid)
    await bot.emu.post("UBOB", ch, "<@UBOT> no: too late in the day", thread_ts=ts)
    req = await bot.requests.get(rid)
    await eventually(lambda: _cancelled(bot, rid), what="the call rejected by the reply")
    text = await _card_saying(bot, ch, ts, "too late in the day")
    assert "`other`" not in text and "*Reason:* too late in the day" in text, req
    line = await _thread_line(bot, ch, ts, "⛔ Rejected by <@UBOB>")
    assert line == "⛔ Rejected by <@UBOB>: too late in the day"


async def _cancelled(bot: Bot, rid: str) -> bool:
    return (await bot.requests.get(rid)).state == State.CANCELLED
