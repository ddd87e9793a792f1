"""Clicks, selects, slash commands and response_url: payload shapes and what the bot's
answers do to the workspace."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from starlette.responses import JSONResponse, PlainTextResponse, Response

from bot.sandbox.slack import ControlError, SlackEmulator
from tests.sandbox.conftest import SECRET, FakeBot, Received, actions, button

TRIGGER = re.compile(r"^\d+\.\d+\.[0-9a-f]+$")
REASONS = {
    "type": "static_select",
    "action_id": "reason",
    "placeholder": {"type": "plain_text", "text": "Why?"},
    "options": [
        {"text": {"type": "plain_text", "text": "Too risky"}, "value": "too_risky"},
        {"text": {"type": "plain_text", "text": "Wrong target"}, "value": "wrong_target"},
    ],
}


async def approval(client: AsyncWebClient) -> tuple[str, str]:
    r = await client.chat_postMessage(
        channel="#hitl-approvals",
        text="Refund 40 EUR?",
        blocks=actions(button("approve", "r1", style="primary"), button("reject", "r1"), REASONS),
    )
    return str(r["channel"]), str(r["ts"])


async def test_block_actions_payload_shape(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    channel, ts = await approval(client)
    outcome = await emulator.click("alice", "approve", channel=channel, ts=ts)
    assert outcome.status == 200 and fake_bot.bad_signatures == 0
    received = fake_bot.received[-1]
    assert received.content_type.startswith("application/x-www-form-urlencoded")
    p = received.payload()
    assert p["type"] == "block_actions"
    assert p["user"] == {
        "id": "UALICE",
        "username": "alice",
        "name": "alice",
        "team_id": "TEMULATOR",
    }
    assert p["api_app_id"] == "AHITLBOT" and p["token"]
    assert p["team"]["id"] == "TEMULATOR"
    assert p["container"] == {
        "type": "message",
        "message_ts": ts,
        "channel_id": channel,
        "is_ephemeral": False,
    }
    assert TRIGGER.match(p["trigger_id"]) and p["trigger_id"] == outcome.trigger_id
    assert p["channel"] == {"id": "CHITLAPPROVALS", "name": "hitl-approvals"}
    assert p["message"]["ts"] == ts and p["message"]["blocks"][0]["block_id"] == "decide"
    assert p["response_url"].startswith(emulator.base_url + "/_emu/response/")
    (action,) = p["actions"]
    assert action["action_id"] == "approve" and action["block_id"] == "decide"
    assert action["value"] == "r1" and action["type"] == "button" and action["action_ts"]
    assert p["state"] == {"values": {}}


async def test_a_pick_is_remembered_in_state_values(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    channel, ts = await approval(client)
    await emulator.click("bob", "reason", channel=channel, ts=ts, selected="wrong_target")
    picked = fake_bot.payloads()[-1]["actions"][0]
    assert picked["type"] == "static_select"
    assert picked["selected_option"]["value"] == "wrong_target"
    await emulator.click("bob", "reject", channel=channel, ts=ts)
    state = fake_bot.payloads()[-1]["state"]["values"]
    assert state["decide"]["reason"]["selected_option"]["value"] == "wrong_target"
    with pytest.raises(ControlError):
        await emulator.click("bob", "reason", channel=channel, ts=ts, selected="nope")
    with pytest.raises(ControlError):
        await emulator.click("bob", "missing", channel=channel, ts=ts)


async def test_trigger_from_a_click_opens_a_modal_once(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    view = {"type": "modal", "title": {"type": "plain_text", "text": "Reject"}, "blocks": []}
    answers: list[Any] = []

    async def open_modal(received: Received) -> Response:
        trigger = received.payload()["trigger_id"]
        answers.append((await client.views_open(trigger_id=trigger, view=view))["view"]["id"])
        try:
            await client.views_open(trigger_id=trigger, view=view)
        except SlackApiError as e:
            answers.append(e.response["error"])
        return Response(status_code=200)

    fake_bot.behaviour = open_modal
    channel, ts = await approval(client)
    await emulator.click("alice", "reject", channel=channel, ts=ts)
    opened = emulator.open_view("alice")
    assert opened is not None and answers == [opened.id, "exchanged_trigger_id"]
    assert emulator.open_view("bob") is None


async def test_trigger_expires_after_three_seconds() -> None:
    now = [1_800_000_000.0]
    emu = SlackEmulator(SECRET, "xoxb-t", clock=lambda: now[0])
    await emu.start()
    try:
        client = AsyncWebClient(token="xoxb-t", base_url=emu.api_url)
        view = {"type": "modal", "title": {"type": "plain_text", "text": "T"}, "blocks": []}
        trigger = emu.triggers.issue("UALICE")
        now[0] += 3.5
        with pytest.raises(SlackApiError) as caught:
            await client.views_open(trigger_id=trigger, view=view)
        assert caught.value.response["error"] == "expired_trigger_id"
        fresh = emu.triggers.issue("UALICE")
        now[0] += 2.5
        assert (await client.views_open(trigger_id=fresh, view=view))["ok"]
    finally:
        await emu.stop()


async def test_response_url_replaces_posts_and_deletes(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    bodies = [
        {"text": "Only you see this"},
        {"response_type": "in_channel", "text": "Everyone sees this"},
        {"replace_original": True, "text": "Approved", "blocks": actions(button("approve"))},
        {"delete_original": True},
    ]

    async def respond(received: Received) -> Response:
        async with httpx.AsyncClient() as http:
            r = await http.post(received.payload()["response_url"], json=bodies.pop(0))
            assert r.json() == {"ok": True}
        return Response(status_code=200)

    fake_bot.behaviour = respond
    channel, ts = await approval(client)
    await emulator.click("alice", "approve", channel=channel, ts=ts)
    assert [e.text for e in emulator.ephemerals("alice")] == ["Only you see this"]
    await emulator.click("alice", "approve", channel=channel, ts=ts)
    assert [m.text for m in emulator.messages(channel)] == ["Refund 40 EUR?", "Everyone sees this"]
    await emulator.click("alice", "approve", channel=channel, ts=ts)
    replaced = emulator.messages(channel)[0]
    assert replaced.ts == ts and replaced.text == "Approved"
    await emulator.click("alice", "approve", channel=channel, ts=ts)
    assert [m.text for m in emulator.messages(channel)] == ["Everyone sees this"]


async def test_ephemeral_buttons_and_immediate_answers(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    async def answer_text(received: Received) -> Response:
        return JSONResponse({"text": "Got it"})

    fake_bot.behaviour = answer_text
    r = await client.chat_postEphemeral(
        channel="general", user="UKID", text="pick", blocks=actions(button("ok"))
    )
    outcome = await emulator.click("kid", "ok", channel="general", ts=r["message_ts"])
    p = fake_bot.payloads()[-1]
    assert p["container"]["is_ephemeral"] is True and "message" not in p
    assert outcome.body == {"text": "Got it"}
    assert [e.text for e in emulator.ephemerals("kid")] == ["pick", "Got it"]
    with pytest.raises(ControlError):  # someone else's ephemeral is invisible
        await emulator.click("parent", "ok", channel="general", ts=r["message_ts"])


async def test_interactions_are_not_retried(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    async def broken(received: Received) -> Response:
        return Response(status_code=500)

    fake_bot.behaviour = broken
    channel, ts = await approval(client)
    outcome = await emulator.click("alice", "approve", channel=channel, ts=ts)
    assert (outcome.status, outcome.error) == (500, "http_error")
    assert len(fake_bot.received) == 1 and len(emulator.deliveries) == 1


async def test_slash_command_form_and_answers(emulator: SlackEmulator, fake_bot: FakeBot) -> None:
    async def answer(received: Received) -> Response:
        text = received.form()["text"]
        if text == "json":
            return JSONResponse({"text": "pending: 2"})
        if text == "public":
            return JSONResponse({"response_type": "in_channel", "text": "for all"})
        return PlainTextResponse("plain answer")

    fake_bot.behaviour = answer
    outcome = await emulator.command("carol", "#hitl-leads", "/hitl", "json")
    form = fake_bot.received[-1].form()
    assert form["command"] == "/hitl" and form["text"] == "json"
    assert (form["user_id"], form["user_name"]) == ("UCAROL", "carol")
    assert (form["channel_id"], form["channel_name"]) == ("CHITLLEADS", "hitl-leads")
    assert form["team_id"] == "TEMULATOR" and TRIGGER.match(form["trigger_id"])
    assert form["response_url"].startswith(emulator.base_url)
    assert outcome.status == 200 and outcome.body == {"text": "pending: 2"}
    await emulator.command("carol", "#hitl-leads", "/hitl", "plain")
    await emulator.command("carol", "#hitl-leads", "/hitl", "public")
    assert [e.text for e in emulator.ephemerals("carol")] == ["pending: 2", "plain answer"]
    assert [m.text for m in emulator.messages("hitl-leads")] == ["for all"]


async def test_slash_command_timeout_shows_slackbots_error(fake_bot: FakeBot) -> None:
    emu = SlackEmulator(SECRET, "xoxb-t", fake_bot.url, ack_timeout=0.2)
    await emu.start()
    timed_out = asyncio.Event()
    try:

        async def slow(received: Received) -> Response:
            await timed_out.wait()  # answered only after Slack stopped waiting
            return Response(status_code=200)

        fake_bot.behaviour = slow
        outcome = await emu.command("alice", "general", "/hitl", "pending")
        timed_out.set()
        assert outcome.error == "http_timeout" and outcome.status is None
        (shown,) = emu.ephemerals("alice")
        assert shown.text == '/hitl failed with the error "operation_timeout"'
        assert shown.sender == "USLACKBOT"
    finally:
        timed_out.set()
        await emu.stop()
