"""Modals: view_submission shape, client-side checks, and every response_action."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from starlette.responses import JSONResponse, Response

from bot.sandbox.slack import SlackEmulator, View
from tests.sandbox.conftest import FakeBot, Received, button


def _text(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def _options(*values: str) -> list[dict[str, Any]]:
    return [{"text": _text(v.replace("_", " ")), "value": v} for v in values]


def reject_view(title: str = "Reject") -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": "reject_modal",
        "private_metadata": "r1",
        "external_id": "reject-r1",
        "notify_on_close": True,
        "title": _text(title),
        "submit": _text("Reject"),
        "close": _text("Cancel"),
        "blocks": [
            {
                "type": "input",
                "block_id": "reason",
                "label": _text("Reason"),
                "element": {
                    "type": "static_select",
                    "action_id": "code",
                    "options": _options("too_risky", "wrong_target"),
                },
            },
            {
                "type": "input",
                "block_id": "why",
                "label": _text("Why"),
                "element": {
                    "type": "plain_text_input",
                    "action_id": "text",
                    "multiline": True,
                    "min_length": 3,
                },
            },
            {
                "type": "input",
                "block_id": "notify",
                "optional": True,
                "label": _text("Tell"),
                "element": {"type": "radio_buttons", "action_id": "who", "options": _options("me")},
            },
            {"type": "actions", "block_id": "extra", "elements": [button("more_info")]},
        ],
    }


async def open_modal(emulator: SlackEmulator, client: AsyncWebClient, user: str) -> View:
    trigger = emulator.triggers.issue(user)
    await client.views_open(trigger_id=trigger, view=reject_view())
    view = emulator.open_view(user)
    assert view is not None
    return view


async def test_submission_payload_and_close(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    view = await open_modal(emulator, client, "UALICE")
    outcome = await emulator.submit(
        "alice", view.id, {"reason": {"code": "too_risky"}, "text": "blast radius"}
    )
    assert (outcome.status, outcome.view_action) == (200, "closed")
    assert emulator.open_view("alice") is None
    p = fake_bot.payloads()[-1]
    assert p["type"] == "view_submission" and p["user"]["id"] == "UALICE"
    assert p["trigger_id"] == outcome.trigger_id
    v = p["view"]
    assert (v["id"], v["callback_id"], v["private_metadata"]) == (view.id, "reject_modal", "r1")
    assert v["hash"] == view.hash and v["type"] == "modal"
    values = v["state"]["values"]
    assert values["reason"]["code"]["type"] == "static_select"
    assert values["reason"]["code"]["selected_option"]["value"] == "too_risky"
    assert values["why"]["text"] == {"type": "plain_text_input", "value": "blast radius"}
    assert values["notify"]["who"] == {"type": "radio_buttons", "selected_option": None}


async def test_client_side_checks_send_nothing(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    view = await open_modal(emulator, client, "UBOB")
    missing = await emulator.submit("bob", view.id, {"reason": "wrong_target"})
    assert missing.dispatched is False and missing.view_action == "kept_open"
    assert missing.errors == {"why": "Please complete this required field."}
    short = await emulator.submit("bob", view.id, {"why": {"text": "no"}})
    assert short.errors == {"why": "Must be at least 3 characters."}
    assert fake_bot.received == []
    kept = await emulator.submit("bob", view.id, {"why": "fine now"})  # reason was remembered
    assert kept.view_action == "closed"


async def test_errors_update_push_and_clear(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    answers: list[dict[str, Any]] = [
        {"response_action": "errors", "errors": {"why": "Say more"}},
        {"response_action": "update", "view": reject_view("Reject (2)")},
        {"response_action": "push", "view": reject_view("Sure?") | {"external_id": ""}},
        {"response_action": "clear"},
    ]

    async def answer(received: Received) -> Response:
        return JSONResponse(answers.pop(0))

    fake_bot.behaviour = answer
    view = await open_modal(emulator, client, "UCAROL")
    values = {"reason": "too_risky", "why": "because"}
    errors = await emulator.submit("carol", view.id, values)
    assert (errors.view_action, errors.errors) == ("errors", {"why": "Say more"})
    shown = emulator.state()["views"]["UCAROL"][-1]
    assert shown["id"] == view.id and shown["errors"] == {"why": "Say more"}
    updated = await emulator.submit("carol", view.id, values)
    assert updated.view_action == "updated" and updated.view_id == view.id
    assert view.definition["title"]["text"] == "Reject (2)" and view.errors == {}
    pushed = await emulator.submit("carol", view.id, values)
    assert pushed.view_action == "pushed" and pushed.view_id != view.id
    top = emulator.open_view("carol")
    assert top is not None and top.previous_view_id == view.id and top.root_view_id == view.id
    cleared = await emulator.submit("carol", top.id, values)
    assert cleared.view_action == "cleared" and emulator.open_view("carol") is None


async def test_close_notifies_and_a_failed_submission_keeps_the_modal(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    async def broken(received: Received) -> Response:
        payload = received.payload()
        return Response(status_code=500 if payload["type"] == "view_submission" else 200)

    fake_bot.behaviour = broken
    view = await open_modal(emulator, client, "UKID")
    failed = await emulator.submit("kid", view.id, {"reason": "too_risky", "why": "because"})
    assert failed.view_action == "kept_open" and view.notice
    closed = await emulator.close_view("kid", view.id)
    assert closed.view_action == "closed" and emulator.open_view("kid") is None
    last = fake_bot.payloads()[-1]
    assert last["type"] == "view_closed" and last["view"]["id"] == view.id
    assert last["is_cleared"] is False


async def test_clicks_inside_a_modal(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    view = await open_modal(emulator, client, "UPARENT")
    quiet = await emulator.click("parent", "code", view_id=view.id, selected="wrong_target")
    assert quiet.dispatched is False and fake_bot.received == []
    await emulator.click("parent", "more_info", view_id=view.id)
    p = fake_bot.payloads()[-1]
    assert p["type"] == "block_actions"
    assert p["container"] == {"type": "view", "view_id": view.id}
    assert p["view"]["state"]["values"]["reason"]["code"]["selected_option"]["value"] == (
        "wrong_target"
    )


async def test_bot_updates_an_open_view_by_external_id(
    emulator: SlackEmulator, client: AsyncWebClient
) -> None:
    view = await open_modal(emulator, client, "UALICE")
    r = await client.views_update(external_id="reject-r1", view=reject_view("Changed"))
    assert r["view"]["id"] == view.id and r["view"]["hash"] != ""
    assert view.definition["title"]["text"] == "Changed"
    with pytest.raises(SlackApiError) as caught:
        trigger = emulator.triggers.issue("UALICE")
        await client.views_open(trigger_id=trigger, view=reject_view() | {"title": _text("x" * 25)})
    assert caught.value.response["error"] == "invalid_arguments"
