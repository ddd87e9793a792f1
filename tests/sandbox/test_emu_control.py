"""The control API over HTTP (what the page uses) and the page itself as served."""

from __future__ import annotations

import re

import httpx
from slack_sdk.web.async_client import AsyncWebClient
from starlette.responses import JSONResponse, Response

from bot.sandbox.slack import SlackEmulator
from tests.sandbox.conftest import FakeBot, Received, actions, button
from tests.sandbox.test_emu_modals import reject_view


async def test_page_is_self_contained(emulator: SlackEmulator) -> None:
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        page = await http.get("/")
        linked = await http.get("/archives/CGENERAL/p1700000000000100")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert html.lower().startswith("<!doctype html>")
    assert re.findall(r"(?i)https?://|//[a-z0-9.-]+\.[a-z]{2,}/", html) == []
    assert re.findall(r"(?i)<link|\ssrc=|@import|url\(", html) == []
    for element_id in ("act-as", "composer", "composer-send", "thread-composer", "modal-submit"):
        assert f'id="{element_id}"' in html
    assert "<!-- page_blocks.html -->" not in html and "const BK" in html
    assert linked.text == html


async def test_acting_through_http(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    async def answer(received: Received) -> Response:
        if "payload" in received.form():
            payload = received.payload()
            if payload["type"] == "block_actions":
                await client.views_open(trigger_id=payload["trigger_id"], view=reject_view())
            return Response(status_code=200)
        if "command" in received.form():
            return JSONResponse({"text": "nothing pending"})
        return Response(status_code=200)

    fake_bot.behaviour = answer
    posted = await client.chat_postMessage(
        channel="#hitl-team", text="draft email?", blocks=actions(button("reject"))
    )
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        reply = await http.post(
            "/_emu/post",
            json={"user": "bob", "channel": "#hitl-team", "text": "hm", "thread_ts": posted["ts"]},
        )
        assert reply.status_code == 200 and reply.json()["thread_ts"] == posted["ts"]
        assert reply.json()["statuses"] == [200]
        click = await http.post(
            "/_emu/click",
            json={"user": "bob", "channel": "CHITLTEAM", "ts": posted["ts"], "action_id": "reject"},
        )
        assert click.json()["status"] == 200
        state = (await http.get("/_emu/state")).json()
        (view,) = state["views"]["UBOB"]
        submit = await http.post(
            "/_emu/submit",
            json={"user": "bob", "view_id": view["id"], "values": {"reason": "too_risky"}},
        )
        assert submit.json()["errors"] == {"why": "Please complete this required field."}
        submit = await http.post(
            "/_emu/submit",
            json={"user": "bob", "view_id": view["id"], "values": {"why": "not now"}},
        )
        assert submit.json()["view_action"] == "closed"
        command = await http.post(
            "/_emu/command", json={"user": "bob", "channel": "hitl-team", "command": "/hitl"}
        )
        assert command.json()["body"] == {"text": "nothing pending"}
        home = await http.post("/_emu/home", json={"user": "bob"})
        assert home.json()["channel"].startswith("D")
        state = (await http.get("/_emu/state")).json()
        deliveries = (await http.get("/_emu/deliveries")).json()
    team = next(c for c in state["channels"] if c["name"] == "hitl-team")
    (message,) = team["messages"]
    assert [r["text"] for r in message["replies"]] == ["hm"] and message["reply_count"] == 1
    assert [e["text"] for e in state["ephemerals"]] == ["nothing pending"]
    assert state["views"] == {}
    assert [d["kind"] for d in deliveries] == [
        "event",
        "block_actions",
        "view_submission",
        "command",
        "event",
    ]
    assert all(d["ok"] for d in deliveries)


async def test_control_errors_and_reset(emulator: SlackEmulator, client: AsyncWebClient) -> None:
    posted = await client.chat_postMessage(channel="general", text="x")
    await client.reactions_add(channel="CGENERAL", timestamp=posted["ts"], name="eyes")
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        state = (await http.get("/_emu/state")).json()
        general = next(c for c in state["channels"] if c["id"] == "CGENERAL")
        assert general["messages"][0]["reactions"] == {"eyes": ["UBOT"]}
        nobody = await http.post("/_emu/post", json={"user": "zed", "channel": "general"})
        assert nobody.status_code == 404 and "zed" in nobody.json()["error"]
        missing = await http.post("/_emu/click", json={"user": "alice"})
        assert missing.status_code == 400
        bot = await http.post("/_emu/post", json={"user": "UBOT", "channel": "general"})
        assert bot.status_code == 400
        not_json = await http.post("/_emu/post", content=b"[1]")
        assert not_json.status_code == 400
        gone = await http.post("/_emu/response/nope", json={"text": "x"})
        assert gone.status_code == 404
        version = state["version"]
        await http.post("/_emu/reset")
        after = (await http.get("/_emu/state")).json()
    assert after["version"] > version
    assert all(c["messages"] == [] for c in after["channels"])
    assert emulator.calls.counts == {}
