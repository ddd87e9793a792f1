"""A real slack_bolt AsyncApp against the emulator: if Bolt accepts what the emulator sends
and the emulator accepts what Bolt sends, the bot's own tests can trust both."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.sandbox.slack import BackgroundServer, SlackEmulator
from tests.sandbox.conftest import SECRET, TOKEN, actions, button
from tests.support.poll import eventually

MODAL = {
    "type": "modal",
    "callback_id": "reject_modal",
    "title": {"type": "plain_text", "text": "Reject"},
    "submit": {"type": "plain_text", "text": "Reject"},
    "blocks": [
        {
            "type": "input",
            "block_id": "why",
            "label": {"type": "plain_text", "text": "Why?"},
            "element": {"type": "plain_text_input", "action_id": "text"},
        }
    ],
}


def bolt_app(emulator: SlackEmulator) -> AsyncApp:
    app = AsyncApp(
        token=TOKEN,
        signing_secret=SECRET,
        client=AsyncWebClient(token=TOKEN, base_url=emulator.api_url),
    )

    @app.event("app_mention")
    async def mention(event: dict[str, Any], say: Any) -> None:
        await say(text=f"hi <@{event['user']}>", thread_ts=event["ts"])

    @app.event("message")
    async def message(event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("thread_ts"):
            await client.reactions_add(channel=event["channel"], timestamp=event["ts"], name="eyes")

    @app.action("approve")
    async def approve(ack: Any, respond: Any, body: dict[str, Any]) -> None:
        await ack()
        await respond(replace_original=True, text=f"Approved by <@{body['user']['id']}>")

    @app.action("reject")
    async def reject(ack: Any, client: AsyncWebClient, body: dict[str, Any]) -> None:
        await ack()
        await client.views_open(trigger_id=body["trigger_id"], view=MODAL)

    @app.view("reject_modal")
    async def submitted(ack: Any, view: dict[str, Any], client: AsyncWebClient) -> None:
        text = view["state"]["values"]["why"]["text"]["value"]
        if len(text) < 5:
            await ack(response_action="errors", errors={"why": "Say more"})
            return
        await ack()
        await client.chat_postMessage(channel="#hitl-approvals", text=f"Rejected: {text}")

    @app.command("/hitl")
    async def command(ack: Any, command: dict[str, Any]) -> None:
        await ack(f"pending for {command['user_name']}: 0")

    return app


@pytest.fixture
async def bolt(emulator: SlackEmulator) -> AsyncIterator[AsyncApp]:
    app = bolt_app(emulator)
    handler = AsyncSlackRequestHandler(app)

    async def events(request: Request) -> Response:
        return await handler.handle(request)

    server = BackgroundServer(Starlette(routes=[Route("/slack/events", events, methods=["POST"])]))
    emulator.events_url = await server.start() + "/slack/events"
    try:
        yield app
    finally:
        await server.stop()


async def test_bolt_handles_events_actions_modals_and_commands(
    emulator: SlackEmulator, bolt: AsyncApp, client: AsyncWebClient
) -> None:
    mention = await emulator.post("alice", "#hitl-approvals", "<@UBOT> are you there?")
    assert mention.statuses == [200, 200]
    await eventually(lambda: len(emulator.replies("hitl-approvals", mention.ts)) == 1)
    assert emulator.replies("hitl-approvals", mention.ts)[0].text == "hi <@UALICE>"

    reply = await emulator.post("bob", "#hitl-approvals", "me too", thread_ts=mention.ts)
    await eventually(lambda: bool(emulator.replies("hitl-approvals", mention.ts)[-1].reactions))
    assert emulator.replies("hitl-approvals", mention.ts)[-1].ts == reply.ts

    posted = await client.chat_postMessage(
        channel="#hitl-approvals", text="ok?", blocks=actions(button("approve"), button("reject"))
    )
    clicked = await emulator.click("carol", "approve", channel=posted["channel"], ts=posted["ts"])
    assert clicked.status == 200
    await eventually(lambda: emulator.messages("hitl-approvals")[1].text.startswith("Approved"))

    emulator.workspace.channels["CHITLAPPROVALS"].messages[posted["ts"]].blocks = actions(
        button("reject")
    )
    await emulator.click("carol", "reject", channel=posted["channel"], ts=posted["ts"])
    await eventually(lambda: emulator.open_view("carol") is not None)
    view = emulator.open_view("carol")
    assert view is not None
    short = await emulator.submit("carol", view.id, {"why": "no"})
    assert short.errors == {"why": "Say more"} and emulator.open_view("carol") is view
    done = await emulator.submit("carol", view.id, {"why": "too risky"})
    assert done.view_action == "closed"
    await eventually(lambda: emulator.messages("hitl-approvals")[-1].text == "Rejected: too risky")

    answered = await emulator.command("kid", "general", "/hitl", "pending")
    assert answered.status == 200
    assert [e.text for e in emulator.ephemerals("kid")] == ["pending for kid: 0"]
    assert all(d.ok for d in emulator.deliveries)
    assert emulator.calls.count("auth.test") >= 1
