"""What a run started over the API waits on, when no worker owns it: the question an
agent files under the run is what the run waits on, exactly as a worker's is. A reply in
the run's thread answers it (never a correction), and a stop withdraws it at once,
waking the agent's wait and taking the card's answer buttons away.

The real bot behind the Slack emulator; the run and its question over the real HTTP API.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from bot.core.ids import is_question_id
from bot.core.models import QuestionState
from bot.sdk import Gate, RunStopped
from bot.slack.blocks import render
from tests.e2e.conftest import Bot, all_text, button_values
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}
REVIEW = "#hitl-approvals"


async def _run_and_question(api: httpx.AsyncClient, bot: Bot) -> tuple[str, str, str, Any]:
    """A run for UKID with a question filed under it: (run id, channel, thread, card)."""
    made = await api.post(
        "/v1/runs",
        json={"agent": "outside", "prompt": "Find the bear", "on_behalf_of": "UKID"},
    )
    assert made.status_code == 201, made.text
    run_id = made.json()["id"]

    async def home() -> tuple[str, str] | None:
        r = await bot.runs.get(run_id)
        return (r.channel, r.thread_ts) if r.channel and r.thread_ts else None

    ch, thread = await eventually(home, what="the run's home thread")
    asked = await api.post(
        "/v1/questions",
        json={"question": "Which bear, the brown one?", "run_id": run_id, "timeout_seconds": 600},
    )
    assert asked.status_code == 201, asked.text
    qid = asked.json()["id"]

    def card() -> Any:
        return next((m for m in bot.emu.replies(ch, thread) if qid in all_text(m.blocks)), None)

    return run_id, ch, thread, await eventually(card, what="the question in the run's thread")


async def test_a_reply_in_the_runs_thread_answers_the_api_question(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH, timeout=30) as api:
        run_id, ch, thread, card = await _run_and_question(api, bot)
        qid = next(v for k, v in button_values(card.blocks).items() if k == render.ACTION_ANSWER)
        await bot.emu.post("UKID", ch, "the brown one, yes", thread_ts=thread)

        got = (await api.get(f"/v1/questions/{qid}", params={"wait": 10})).json()
        assert (got["state"], got["answer"], got["answered_by"]) == (
            "answered",
            "the brown one, yes",
            "UKID",
        )
        # an answer, not a correction: nothing queued for the run's next call
        assert (await api.get(f"/v1/runs/{run_id}/steering")).status_code == 204
        assert await bot.steering.pending(run_id) == 0


async def test_a_stop_withdraws_the_api_question_and_wakes_its_wait(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH, timeout=30) as api:
        run_id, ch, thread, card = await _run_and_question(api, bot)
        qid = button_values(card.blocks)[render.ACTION_ANSWER]
        out = await bot.emu.command("UKID", ch, "/hitl", f"stop {run_id}")
        assert out.status == 200

        started = time.monotonic()
        got = (await api.get(f"/v1/questions/{qid}", params={"wait": 20})).json()
        assert got["state"] == "cancelled"
        assert time.monotonic() - started < 10  # woken by the stop, not its long-poll's end

        def updated() -> bool:
            m = next(m for m in bot.emu.replies(ch, thread) if m.ts == card.ts)
            return not button_values(m.blocks)

        await eventually(updated, what="the question's card without its answer button")


async def test_the_api_stop_withdraws_the_api_question(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH, timeout=30) as api:
        run_id, _, _, card = await _run_and_question(api, bot)
        qid = button_values(card.blocks)[render.ACTION_ANSWER]
        assert (await api.post(f"/v1/runs/{run_id}/stop")).status_code == 200
        got = (await api.get(f"/v1/questions/{qid}", params={"wait": 20})).json()
        assert got["state"] == "cancelled"


async def test_the_deciders_of_an_api_call_under_the_run_may_steer_it(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH, timeout=30) as api:
        made = await api.post(
            "/v1/runs", json={"agent": "outside", "prompt": "Refunds", "on_behalf_of": "UKID"}
        )
        run_id = made.json()["id"]
        filed = await api.post(
            "/v1/approvals",
            json={"tool": "refund", "args": {"order": "A1", "amount": 5}, "run_id": run_id},
        )
        assert filed.status_code == 201, filed.text
        rid = filed.json()["id"]
        ch, _ = await bot.message_of(rid)
        run = await bot.runs.get(run_id)
        assert run.channel == ch and run.thread_ts
        # UPARENT may decide the refund (not the run's requester, not an operator)
        await bot.emu.post("UPARENT", ch, "Refund order A2 instead", thread_ts=run.thread_ts)

        got = (await api.get(f"/v1/approvals/{rid}", params={"wait": 10})).json()
        assert got["state"] == "cancelled"
        assert got["resolution"]["reason_code"] == "superseded"
        steer = await api.get(f"/v1/runs/{run_id}/steering")
        assert steer.status_code == 200
        said = steer.json()
        assert (said["text"], said["actor"]) == ("Refund order A2 instead", "UPARENT")


async def test_the_sdks_question_under_a_run_ends_in_run_stopped_at_a_stop(bot: Bot) -> None:
    gate = Gate(api_url=bot.url, api_token="api-token-0123456789")
    try:
        asking = asyncio.ensure_future(gate.ask("Which bear?", run_id="sdk-run-1", timeout=600))
        q = await eventually(lambda: _open_question(bot, "sdk-run-1"), what="the question")
        async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
            assert (await api.post("/v1/runs/sdk-run-1/stop")).status_code == 200
        with pytest.raises(RunStopped):
            await asyncio.wait_for(asking, 15)
        assert (await bot.questions.get(q)).state == QuestionState.CANCELLED
    finally:
        await gate.aclose()


async def _open_question(bot: Bot, run_id: str) -> str | None:
    waits = await bot.steering.waiting(run_id)
    return next((w for w in waits if is_question_id(w)), None)
