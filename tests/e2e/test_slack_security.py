"""Bad input through Slack: forged, replayed, unauthorised, stale, injected, oversized."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.slack.blocks import render
from bot.store import audit
from tests.e2e.conftest import SECRET, Bot, all_text, button_values
from tests.support.poll import eventually


def _signed(body: str, ts: int, secret: str = SECRET) -> dict[str, str]:
    sig = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": str(ts),
        "X-Slack-Signature": f"v0={sig}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def _approve_payload(rid_value: str, user: str = "UALICE") -> str:
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "team": {"id": "T1"},
        "actions": [
            {
                "action_id": render.ACTION_APPROVE,
                "value": rid_value,
                "type": "button",
                "block_id": "b",
            }
        ],
        "trigger_id": "1.2.3",
        "channel": {"id": "CHITLAPPROVALS"},
        "api_app_id": "A1",
        "container": {"type": "message"},
    }
    return urlencode({"payload": json.dumps(payload)})


async def test_forged_and_replayed_requests_get_401_and_change_nothing(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 5})
    ch, ts = await bot.message_of(rid)
    value = button_values(next(m for m in bot.emu.messages(ch) if m.ts == ts).blocks)[
        render.ACTION_APPROVE
    ]
    body = _approve_payload(value)
    async with httpx.AsyncClient() as http:
        forged = await http.post(
            bot.url + "/slack/events",
            content=body,
            headers=_signed(body, int(time.time()), secret="wrong"),
        )
        replayed = await http.post(
            bot.url + "/slack/events", content=body, headers=_signed(body, int(time.time()) - 301)
        )
        unsigned = await http.post(bot.url + "/slack/events", content=body)
        good = await http.post(
            bot.url + "/slack/events", content=body, headers=_signed(body, int(time.time()))
        )
    assert (forged.status_code, replayed.status_code, unsigned.status_code) == (401, 401, 401)
    assert good.status_code == 200  # the same body, signed now, is accepted

    async def approved() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)
    decisions = [e for e in await audit.entries(bot.redis, rid) if e.event == "approve"]
    assert len(decisions) == 1  # the three bad copies never reached the store


async def test_non_approver_and_an_approver_who_is_the_requester_are_refused(bot: Bot) -> None:
    # refund over 1000 is high risk: approvers are the SAPPROVERS group and UKID. UKID asks,
    # so only the self-approval guard stands between them and their own refund.
    rid = await bot.propose("refund", {"amount": 4200, "to": "cust-9"}, requester="UKID")
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=ch, ts=ts)  # not an approver
    await bot.emu.click("UKID", render.ACTION_APPROVE, channel=ch, ts=ts)  # the requester

    async def refusals() -> list[Any]:
        trail = await audit.entries(bot.redis, rid)
        got = [e for e in trail if e.kind == "refused"]
        return got if len(got) == 2 else []

    refused = await eventually(refusals)
    assert {(e.actor, e.reason_code) for e in refused} == {
        ("UPARENT", "not_eligible"),
        ("UKID", "not_eligible"),
    }
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    told = await eventually(lambda: _texts(bot, "UPARENT"))
    assert any("approvers" in t for t in told)
    told = await eventually(lambda: _texts(bot, "UKID"))
    assert any("asked for by you" in t for t in told)
    # Bob is in the SAPPROVERS user group (resolved through usergroups.users.list).
    await bot.emu.click("UBOB", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)


async def _texts(bot: Bot, user: str) -> list[str]:
    return [e.text for e in bot.emu.ephemerals(user)]


async def test_click_carrying_a_stale_payload_hash_is_refused(bot: Bot) -> None:
    # A two-person request: Alice edits it (1 of 2); Bob clicks a copy of the old call.
    rid = await bot.propose("deploy", {"service": "api", "version": "1.2.3"})
    ch, ts = await bot.message_of(rid)
    old_value = button_values(next(m for m in bot.emu.messages(ch) if m.ts == ts).blocks)[
        render.ACTION_APPROVE
    ]
    req = await bot.requests.get(rid)
    await bot.requests.transition(
        rid,
        Decision(
            event=Event.EDIT_AND_APPROVE,
            actor="UALICE",
            payload_hash=req.payload_hash,
            new_args={"service": "api", "version": "9.9.9"},
        ),
    )
    body = _approve_payload(old_value, user="UBOB")
    async with httpx.AsyncClient() as http:
        resp = await http.post(
            bot.url + "/slack/events", content=body, headers=_signed(body, int(time.time()))
        )
    assert resp.status_code == 200

    async def refused() -> list[Any]:
        return [
            e
            for e in await audit.entries(bot.redis, rid)
            if e.kind == "refused" and e.reason_code == "stale_payload"
        ]

    await eventually(refused)
    now = await bot.requests.get(rid)
    assert now.state == State.PENDING_REVIEW and [a.actor for a in now.approvals] == ["UALICE"]
    told = await eventually(lambda: _texts(bot, "UBOB"))
    assert any("changed" in t for t in told)


async def test_mrkdwn_injection_renders_literally(bot: Bot) -> None:
    evil = {"to": "<!channel>", "note": "<@UALICE> <https://evil.example|Approve> & co"}
    rid = await bot.propose("refund", {"amount": 1, **evil})
    ch, ts = await bot.message_of(rid)
    msg = next(m for m in bot.emu.messages(ch) if m.ts == ts)
    shown = all_text(msg.blocks) + msg.text
    assert "<!channel>" not in shown and "<@UALICE>" not in shown
    assert "<https://evil.example|Approve>" not in shown
    assert "&lt;!channel&gt;" in shown and "&amp; co" in shown


async def test_twenty_kilobyte_argument_fits_and_stays_reachable(bot: Bot) -> None:
    big = "x" * 20_000 + "END-OF-NOTE"
    rid = await bot.propose("refund", {"amount": 3, "note": big})
    ch, ts = await bot.message_of(rid)  # the emulator refuses messages over Slack's limits
    msg = next(m for m in bot.emu.messages(ch) if m.ts == ts)
    assert len(msg.blocks) <= 50 and "✂ Cut to fit in Slack: `note`" in all_text(msg.blocks)
    assert "END-OF-NOTE" not in all_text(msg.blocks)
    await bot.emu.click("UALICE", render.ACTION_VIEW, channel=ch, ts=ts)

    async def modal() -> Any:
        return bot.emu.open_view("UALICE")

    view = await eventually(modal)
    assert "END-OF-NOTE" in json.dumps(view.definition)


async def test_malformed_bodies_get_a_clear_4xx_never_a_500(bot: Bot) -> None:
    async with httpx.AsyncClient() as http:
        for body in ("payload=not-json", "{not json"):
            signed = await http.post(
                bot.url + "/slack/events", content=body, headers=_signed(body, int(time.time()))
            )
            forged = await http.post(
                bot.url + "/slack/events",
                content=body,
                headers=_signed(body, int(time.time()), secret="x"),
            )
            assert signed.status_code == 400 and "JSON" in signed.json()["detail"]
            assert forged.status_code == 401
