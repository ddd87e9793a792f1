"""An SDK agent's run, steered and stopped from Slack, in both SDK modes.

The agent (the Python SDK, over Redis or over serve's /v1 API) gates its calls under a
run id of its own. Its first card's thread becomes the run's home: a reply there from
someone who may decide the call withdraws the waiting call and hands the agent the
person's words; `/hitl stop RUN` ends the run; a reply from someone who may not steer
is told so and queues nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from bot.config import Settings
from bot.core.policy import parse_policy
from bot.core.states import State
from bot.sdk import Gate, RunStopped, Steered
from bot.slack.blocks import render
from bot.store.posted.cards import Cards
from tests.e2e.conftest import POLICY, Bot, all_text, button_values
from tests.support.poll import eventually

RUN = "billing:ticket-88"


@pytest.fixture(params=["direct", "http"])
async def gate(request: pytest.FixtureRequest, bot: Bot, redis_url: str) -> AsyncIterator[Gate]:
    if request.param == "direct":
        settings = Settings(redis_url=SecretStr(redis_url))
        g = Gate(settings=settings, policy=parse_policy(POLICY), requester="billing-agent")
    else:
        g = Gate(api_url=bot.url, api_token="api-token-0123456789")
    try:
        yield g
    finally:
        await g.aclose()


async def _card(bot: Bot) -> tuple[str, str, str]:
    """The request the agent waits on, once its card is posted: (id, channel, ts)."""
    pending = await eventually(bot.requests.list_pending, what="a request in review")
    rid = pending[0].id
    ch, ts = await bot.message_of(rid)
    return rid, ch, ts


async def _buttons_gone(bot: Bot, ch: str, ts: str) -> Any:
    msg = next(m for m in bot.emu.messages(ch) if m.ts == ts)
    return msg if not button_values(msg.blocks) else None


async def test_a_reply_in_the_cards_thread_steers_the_waiting_sdk_call(
    bot: Bot, gate: Gate
) -> None:
    waiting = asyncio.ensure_future(
        gate.request_approval("refund", {"order": "A1", "amount": 5}, run_id=RUN)
    )
    rid, ch, ts = await _card(bot)
    run = await eventually(lambda: _home(bot), what="the run's home thread")
    assert (run.channel, run.thread_ts) == (ch, ts)

    await bot.emu.post("UPARENT", ch, "Refund order A2 instead, A1 was fine", thread_ts=ts)

    with pytest.raises(Steered) as got:
        await asyncio.wait_for(waiting, 15)
    assert got.value.text == "Refund order A2 instead, A1 was fine"
    assert got.value.actor == "UPARENT"
    assert str(got.value).startswith("Cancelled. The person says: Refund order A2")
    req = await bot.requests.get(rid)
    assert req.state == State.CANCELLED and req.resolution is not None
    assert req.resolution.reason_code == "superseded"
    await eventually(lambda: _buttons_gone(bot, ch, ts), what="the card without buttons")
    # the agent's next call is its own again: filed, and its card goes to the run's thread
    again = asyncio.ensure_future(
        gate.request_approval("refund", {"order": "A2", "amount": 5}, run_id=RUN)
    )
    second = await eventually(lambda: _second_card(bot, ch, ts), what="a card in the thread")
    assert render.ACTION_APPROVE in button_values(second.blocks)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=second.ts)
    assert (await asyncio.wait_for(again, 15)).args == {"order": "A2", "amount": 5}


async def test_hitl_stop_ends_the_sdk_run_and_refuses_its_later_calls(bot: Bot, gate: Gate) -> None:
    waiting = asyncio.ensure_future(gate.request_approval("refund", {"amount": 5}, run_id=RUN))
    await _card(bot)
    await eventually(lambda: _home(bot), what="the run's home thread")

    out = await bot.emu.command("UPARENT", "#hitl-approvals", "/hitl", f"stop {RUN}")

    assert out.status == 200
    with pytest.raises(RunStopped):
        await asyncio.wait_for(waiting, 15)
    with pytest.raises(RunStopped):
        await gate.request_approval("move_claw", {"x": 1}, run_id=RUN)
    run = await bot.runs.get(RUN)
    assert run.state.value == "stopped" and run.stop_requested


async def test_a_reply_from_someone_who_may_not_steer_is_told_and_queues_nothing(
    bot: Bot, gate: Gate
) -> None:
    # over 1000: high, decided by SAPPROVERS (UALICE, UBOB) and UKID only
    waiting = asyncio.ensure_future(gate.request_approval("refund", {"amount": 4200}, run_id=RUN))
    rid, ch, ts = await _card(bot)
    await eventually(lambda: _home(bot), what="the run's home thread")

    await bot.emu.post("UTEAM1", ch, "do it twice", thread_ts=ts)

    told = await eventually(
        lambda: [e for e in bot.emu.ephemerals("UTEAM1") if RUN in json_text(e)],
        what="an ephemeral to UTEAM1",
    )
    assert told
    assert await bot.steering.pending(RUN) == 0
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)


def json_text(e: Any) -> str:
    return str(getattr(e, "text", "")) + all_text(getattr(e, "blocks", None))


async def _home(bot: Bot) -> Any:
    run = await bot.runs.get(RUN)
    return run if run.thread_ts else None


async def _second_card(bot: Bot, ch: str, ts: str) -> Any:
    found = [m for m in bot.emu.replies(ch, ts) if button_values(m.blocks)]
    return found[-1] if found else None


async def test_a_titled_run_is_named_on_its_card_and_in_the_app_home_of_who_may_steer_it(
    bot: Bot, gate: Gate
) -> None:
    title = "Ticket 88 <!channel> refunds"  # the agent's words: shown, never a mention
    waiting = asyncio.ensure_future(
        gate.request_approval("refund", {"amount": 4200}, run_id=RUN, run_title=title)
    )
    rid, ch, ts = await _card(bot)
    card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
    assert "Ticket 88 &lt;!channel&gt; refunds" in all_text(card.blocks)
    assert "<!channel>" not in all_text(card.blocks)
    assert f"`/hitl stop {RUN}`" in all_text(card.blocks)  # how to stop it, ready to copy
    run = await eventually(lambda: _home(bot), what="the run's home thread")
    assert run.prompt == title and run.outside

    async def home_of(user: str) -> Any:
        await bot.emu.open_home(user)
        return await eventually(lambda: bot.emu.home_view(user), what=f"{user}'s App Home")

    alice = all_text((await home_of("UALICE")).definition["blocks"])  # SAPPROVERS decide it
    assert RUN in alice and "Ticket 88 &lt;!channel&gt; refunds" in alice
    assert "Open its thread" in alice and rid in alice
    # the link opens the thread itself, not the channel at its first card
    link = await eventually(lambda: Cards(bot.redis).thread_link(RUN), what="the thread link")
    assert link.endswith(f"?thread_ts={run.thread_ts}&cid={run.channel}"), link
    outsider = all_text((await home_of("UTEAM1")).definition["blocks"])  # may not decide it
    assert RUN not in outsider and "No agent run you may steer" in outsider

    # A later call cannot rename the run: its name is the one people saw first.
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    await asyncio.wait_for(waiting, 15)
    later = await gate.request_approval("move_claw", {"x": 1}, run_id=RUN, run_title="other")
    assert later.state == State.APPROVED
    assert (await bot.runs.get(RUN)).prompt == title


async def test_the_deciders_of_a_call_filed_under_an_api_started_run_may_steer_it(
    bot: Bot,
) -> None:
    """A run started with POST /v1/runs and driven by the caller's own agent (no worker):
    who may decide the call it filed under that run may steer it from the run's thread,
    as docs/security.md says, though the run's requester is the API identity."""
    auth = {"Authorization": "Bearer api-token-0123456789"}
    async with httpx.AsyncClient(base_url=bot.url, headers=auth) as http:
        started = await http.post(
            "/v1/runs",
            json={
                "agent": "billing",
                "prompt": "Refunds of ticket 88",
                "channel": "#hitl-approvals",
            },
        )
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        run = await eventually(lambda: _home_of(bot, run_id), what="the run's header thread")
        # over 1000: high, decided by SAPPROVERS (UALICE, UBOB) and UKID
        filed = await http.post(
            "/v1/approvals", json={"tool": "refund", "args": {"amount": 4200}, "run_id": run_id}
        )
        assert filed.status_code == 201, filed.text
        rid = filed.json()["id"]
    await bot.message_of(rid)

    await bot.emu.post("UALICE", run.channel, "Refund 900 only", thread_ts=run.thread_ts)

    async def steered() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == State.CANCELLED else None

    req = await eventually(steered, what="the waiting call withdrawn by the correction")
    assert req.resolution is not None and req.resolution.reason_code == "superseded"
    assert await bot.steering.pending(run_id) == 1
    assert not [e for e in bot.emu.ephemerals("UALICE") if run_id in json_text(e)]
    # someone who may not decide that call is still refused
    await bot.emu.post("UTEAM1", run.channel, "do it twice", thread_ts=run.thread_ts)
    await eventually(
        lambda: [e for e in bot.emu.ephemerals("UTEAM1") if run_id in json_text(e)],
        what="an ephemeral to UTEAM1",
    )
    assert await bot.steering.pending(run_id) == 1


async def _home_of(bot: Bot, run_id: str) -> Any:
    run = await bot.runs.get(run_id)
    return run if run.thread_ts else None
