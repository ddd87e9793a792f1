"""Slow answers: the call takes effect at once, its answer comes late (or when cleared);
and reading history back with `oldest` and `include_all_metadata`, as Slack does."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox.slack import SlackEmulator
from tests.sandbox.conftest import TOKEN
from tests.support.poll import eventually


async def test_a_delayed_post_is_in_the_channel_before_its_answer_arrives(
    emulator: SlackEmulator, client: AsyncWebClient
) -> None:
    emulator.add_delay(30, method="chat.postMessage")
    posting = asyncio.create_task(client.chat_postMessage(channel="#general", text="card"))
    await eventually(lambda: emulator.faults.held == 1)
    assert [m.text for m in emulator.messages("general")] == ["card"]
    assert not posting.done()
    # other methods and later posts are not held
    other = await client.chat_postMessage(channel="#general", text="second")
    assert other["ok"]
    emulator.faults.clear()  # lets the held answer go now
    answer = await asyncio.wait_for(posting, 5)
    assert answer["ts"] == emulator.messages("general")[0].ts
    assert emulator.faults.held == 0


async def test_a_client_that_gives_up_never_learns_the_ts(emulator: SlackEmulator) -> None:
    emulator.add_delay(30, method="chat.postMessage")
    impatient = AsyncWebClient(token=TOKEN, base_url=emulator.api_url, timeout=1, retry_handlers=[])
    with pytest.raises(TimeoutError):
        await impatient.chat_postMessage(channel="#general", text="card")
    assert [m.text for m in emulator.messages("general")] == ["card"]
    emulator.faults.clear()


async def test_delays_over_the_control_api(emulator: SlackEmulator) -> None:
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        armed = await http.post(
            "/_emu/delays", json={"seconds": 30, "count": 2, "method": "chat.postMessage"}
        )
        assert armed.json() == {
            "delays": [{"seconds": 30.0, "remaining": 2, "method": "chat.postMessage"}],
            "held": 0,
        }
        post = asyncio.create_task(
            http.post(
                "/api/chat.postMessage",
                headers={"Authorization": f"Bearer {TOKEN}"},
                json={"channel": "#general", "text": "x"},
            )
        )
        await eventually(lambda: emulator.faults.held == 1)
        listed = (await http.get("/_emu/delays")).json()
        assert listed["held"] == 1 and listed["delays"][0]["remaining"] == 1
        assert (await http.delete("/_emu/delays")).json() == {"delays": [], "held": 1}
        assert (await asyncio.wait_for(post, 5)).json()["ok"] is True
        assert (await http.post("/_emu/delays", json={"count": 1})).status_code == 400


async def test_history_shows_metadata_only_when_asked_and_honours_oldest(
    emulator: SlackEmulator, client: AsyncWebClient
) -> None:
    meta = {"event_type": "hitl_post", "event_payload": {"kind": "request", "id": "r1"}}
    first = await client.chat_postMessage(channel="#general", text="one", metadata=meta)
    second = await client.chat_postMessage(channel="#general", text="two", metadata=meta)
    cid = first["channel"]

    plain = await client.conversations_history(channel=cid)
    assert [m["text"] for m in plain["messages"]] == ["two", "one"]  # newest first
    assert all("metadata" not in m for m in plain["messages"])

    full = await client.conversations_history(channel=cid, include_all_metadata=True)
    assert full["messages"][0]["metadata"] == meta

    after = await client.conversations_history(channel=cid, oldest=first["ts"])
    assert [m["ts"] for m in after["messages"]] == [second["ts"]]
    both = await client.conversations_history(channel=cid, oldest=first["ts"], inclusive=True)
    assert len(both["messages"]) == 2

    reply = await client.chat_postMessage(
        channel=cid, thread_ts=first["ts"], text="in thread", metadata=meta
    )
    thread = await client.conversations_replies(
        channel=cid, ts=first["ts"], oldest=second["ts"], include_all_metadata=True
    )
    assert [m["ts"] for m in thread["messages"]] == [first["ts"], reply["ts"]]
    assert thread["messages"][1]["metadata"] == meta
