"""The gated side never chooses who approves it, and nobody approves what they asked for.

Driven from outside: the HTTP API of the real bot and clicks through the Slack emulator.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.core.states import State
from bot.slack.blocks import render
from bot.store import audit
from tests.e2e.conftest import SECRET, Agents, Bot, all_text, button_values
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}


async def _api(bot: Bot, method: str, path: str, **kw: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as http:
        return await http.request(method, path, **kw)


def _card(bot: Bot, ch: str, ts: str) -> Any:
    return next(m for m in bot.emu.messages(ch) if m.ts == ts)


async def test_the_api_may_not_route_review_to_a_channel_of_its_choosing(bot: Bot) -> None:
    call = {"tool": "deploy", "args": {"service": "api"}, "channel": "#agent-chosen"}
    got = await _api(bot, "POST", "/v1/approvals", json=call)
    assert got.status_code == 403, got.text
    assert got.json()["error"] == "forbidden" and "#hitl-approvals" in got.json()["detail"]
    assert await bot.requests.list_pending() == []  # refused before anything was stored
    # Naming the tier's own review channel changes nothing and is accepted.
    ok = await _api(bot, "POST", "/v1/approvals", json={**call, "channel": "#hitl-approvals"})
    assert ok.status_code == 201


async def test_the_requester_comes_from_the_token_and_the_body_adds_on_behalf_of(
    bot: Bot,
) -> None:
    call = {"tool": "refund", "args": {"amount": 30}}
    forged = await _api(bot, "POST", "/v1/approvals", json={**call, "requester": "UBOSS"})
    assert forged.status_code == 403 and "credential" in forged.json()["detail"]
    made = await _api(bot, "POST", "/v1/approvals", json={**call, "on_behalf_of": "UALICE"})
    assert made.status_code == 201
    body = made.json()
    assert (body["requester"], body["on_behalf_of"]) == ("api", "UALICE")
    ch, ts = await bot.message_of(body["id"])
    card = all_text(_card(bot, ch, ts).blocks)
    assert "On behalf of" in card and "<@UALICE>" in card


async def test_an_idempotency_key_reused_for_another_person_or_risk_is_409(bot: Bot) -> None:
    call = {"tool": "refund", "args": {"amount": 30}, "idempotency_key": "k-1"}
    first = await _api(bot, "POST", "/v1/approvals", json={**call, "on_behalf_of": "UALICE"})
    assert first.status_code == 201
    again = await _api(bot, "POST", "/v1/approvals", json={**call, "on_behalf_of": "UALICE"})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    other = await _api(bot, "POST", "/v1/approvals", json={**call, "on_behalf_of": "UBOB"})
    riskier = await _api(
        bot, "POST", "/v1/approvals", json={**call, "on_behalf_of": "UALICE", "risk": "critical"}
    )
    assert (other.status_code, riskier.status_code) == (409, 409)


async def test_the_person_an_agent_acts_for_may_reject_but_never_approve(bot: Bot) -> None:
    made = await _api(
        bot,
        "POST",
        "/v1/approvals",
        json={"tool": "refund", "args": {"amount": 30}, "on_behalf_of": "UALICE"},
    )
    rid = made.json()["id"]
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    await eventually(lambda: _told(bot, "UALICE", "asked for by you"))
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    await bot.emu.click("UBOB", render.ACTION_APPROVE, channel=ch, ts=ts)
    await _approved(bot, rid)


async def test_a_tier_without_approvers_is_decided_by_its_reviewer_channel_not_everyone(
    bot: Bot,
) -> None:
    rid = await bot.propose("post_note", {"text": "hello"})
    ch, ts = await bot.message_of(rid)
    # Alice leaves the channel; her click (she still has the card open) is refused.
    bot.emu.workspace.channels["CHITLAPPROVALS"].members = ["UBOT", "UCAROL"]
    value = button_values(_card(bot, ch, ts).blocks)[render.ACTION_APPROVE]
    got = await _signed_click(bot, "UALICE", value, ch)
    assert got.status_code == 200, got.text

    async def refused() -> Any:
        trail = await audit.entries(bot.redis, rid)
        return [e for e in trail if e.kind == "refused" and e.actor == "UALICE"]

    assert (await eventually(refused))[0].reason_code == "not_eligible"
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    await bot.emu.click("UCAROL", render.ACTION_APPROVE, channel=ch, ts=ts)
    await _approved(bot, rid)


async def test_a_kid_may_not_approve_what_she_asked_the_agent_for(bot: Bot, agents: Agents) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    await eventually(lambda: _reply(bot, ch, home, "Is this the one?"), timeout_s=15)
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)
    card = await eventually(lambda: _live_card(bot, ch, home), timeout_s=15)
    await bot.emu.click("UKID", render.ACTION_APPROVE, channel=ch, ts=card.ts)
    told = await eventually(lambda: _told(bot, "UKID", "asked for by you"))
    assert any("<@UPARENT>" in t or "anyone" in t for t in told), told
    rid = render.ButtonValue.decode(button_values(card.blocks)[render.ACTION_APPROVE])[0]
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW


async def test_a_correction_withdraws_the_call_waiting_for_approval(
    bot: Bot, agents: Agents
) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    await eventually(lambda: _reply(bot, ch, home, "Is this the one?"), timeout_s=15)
    await bot.emu.post("UKID", ch, "yes", thread_ts=home)
    bear = await eventually(lambda: _live_card(bot, ch, home), timeout_s=15)
    rid = render.ButtonValue.decode(button_values(bear.blocks)[render.ACTION_APPROVE])[0]
    await bot.emu.post("UKID", ch, "No, wait! The penguin!", thread_ts=home)

    async def withdrawn() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == State.CANCELLED else None

    req = await eventually(withdrawn)
    assert req.resolution is not None and req.resolution.reason_code == "superseded"
    assert req.resolution.actor == "UKID"

    async def bear_card_closed() -> bool:
        card = next(m for m in bot.emu.replies(ch, home) if m.ts == bear.ts)
        return not button_values(card.blocks)

    await eventually(bear_card_closed)
    # The model read the correction: its next proposal is the penguin.
    penguin = await eventually(lambda: _live_card(bot, ch, home, "penguin"), timeout_s=15)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=penguin.ts)


async def test_only_the_initiator_approvers_and_operators_may_steer_or_stop(
    bot: Bot, agents: Agents
) -> None:
    posted = await bot.emu.post("UKID", "#hitl-approvals", "<@UBOT> Get me the bear!")
    ch, home = posted.channel, posted.ts
    run_id = await eventually(lambda: bot.runs.by_thread(ch, home))
    await eventually(lambda: _reply(bot, ch, home, "Is this the one?"), timeout_s=15)
    # A stranger in the workspace (policy approvers "*" aside, nothing waits for approval).
    out = await bot.emu.command("UTEAM1", "#general", "/hitl", f"stop {run_id}")
    assert "Only the person who started" in str(out.body)
    assert not (await bot.runs.get(run_id)).stop_requested
    out = await bot.emu.command("UTEAM1", "#general", "/hitl", f"steer {run_id} go left")
    assert "Only the person who started" in str(out.body)
    assert await bot.steering.pending(run_id) == 0
    audit = await bot.redis.lrange(f"hitl:{{run:{run_id}}}:audit", 0, -1)
    assert sum('"refused"' in line for line in audit) == 2
    out = await bot.emu.command("UKID", "#general", "/hitl", f"stop {run_id}")
    assert (await bot.runs.get(run_id)).stop_requested


async def test_steering_an_unknown_run_is_404_and_writes_nothing(bot: Bot) -> None:
    got = await _api(bot, "POST", "/v1/runs/run-nobody/steer", json={"text": "hi"})
    assert got.status_code == 404
    assert await bot.redis.keys("*run-nobody*") == []


async def _told(bot: Bot, user: str, needle: str) -> list[str] | None:
    texts = [e.text for e in bot.emu.ephemerals(user)]
    return texts if any(needle in t for t in texts) else None


async def _signed_click(bot: Bot, user: str, value: str, channel: str) -> httpx.Response:
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "team": {"id": "T1"},
        "actions": [{"action_id": render.ACTION_APPROVE, "value": value, "type": "button"}],
        "channel": {"id": channel},
        "container": {"type": "message"},
        "trigger_id": "1.2.3",
    }
    body = urlencode({"payload": json.dumps(payload)})
    ts = str(int(time.time()))
    sig = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={sig}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    async with httpx.AsyncClient() as http:
        return await http.post(bot.url + "/slack/events", content=body, headers=headers)


async def _reply(bot: Bot, ch: str, home: str, needle: str) -> Any:
    found = [m for m in bot.emu.replies(ch, home) if needle in m.text + all_text(m.blocks)]
    return found[-1] if found else None


async def _live_card(bot: Bot, ch: str, home: str, needle: str = "drop_claw") -> Any:
    found = [
        m
        for m in bot.emu.replies(ch, home)
        if render.ACTION_APPROVE in button_values(m.blocks) and needle in all_text(m.blocks)
    ]
    return found[-1] if found else None


async def _approved(bot: Bot, rid: str) -> None:
    """The click is acked before it is applied: wait for the state, do not read it once."""

    async def state() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(state)
