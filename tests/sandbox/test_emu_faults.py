"""Fault switches: 429 with Retry-After and 5xx, and the call log that proves no duplicates."""

from __future__ import annotations

import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox.slack import SlackEmulator
from tests.sandbox.conftest import TOKEN


async def test_rate_limited_then_delivered_exactly_once(emulator: SlackEmulator) -> None:
    emulator.add_fault(429, count=1, retry_after=1, method="chat.postMessage")
    client = AsyncWebClient(
        token=TOKEN,
        base_url=emulator.api_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=2)],
    )
    r = await client.chat_postMessage(channel="#hitl-approvals", text="approve me")
    assert r["ok"] is True
    assert [m.text for m in emulator.messages("hitl-approvals")] == ["approve me"]
    assert emulator.calls.count("chat.postMessage") == 2
    assert emulator.calls.count("chat.postMessage", ok=True) == 1
    first = emulator.calls.of("chat.postMessage")[0]
    assert (first.http_status, first.error) == (429, "ratelimited")


async def test_without_a_retry_handler_the_429_surfaces(emulator: SlackEmulator) -> None:
    emulator.add_fault(429, retry_after=7)
    client = AsyncWebClient(token=TOKEN, base_url=emulator.api_url, retry_handlers=[])
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="general", text="x")
    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == "7"
    assert caught.value.response["error"] == "ratelimited"
    assert emulator.messages("general") == []


async def test_server_errors_only_hit_the_named_method(emulator: SlackEmulator) -> None:
    emulator.add_fault(500, count=1, method="chat.update")
    client = AsyncWebClient(
        token=TOKEN,
        base_url=emulator.api_url,
        retry_handlers=[AsyncServerErrorRetryHandler(max_retry_count=1)],
    )
    posted = await client.chat_postMessage(channel="general", text="v1")  # not faulted
    await client.chat_update(channel=posted["channel"], ts=posted["ts"], text="v2")
    assert emulator.calls.count("chat.postMessage") == 1
    assert emulator.calls.count("chat.update") == 2
    assert emulator.messages("general")[0].text == "v2"


async def test_faults_and_calls_over_the_control_api(emulator: SlackEmulator) -> None:
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        armed = await http.post("/_emu/faults", json={"status": 429, "count": 2, "retry_after": 3})
        assert armed.json()["faults"][0]["remaining"] == 2
        api = emulator.api_url + "auth.test"
        headers = {"Authorization": f"Bearer {TOKEN}"}
        statuses = [(await http.post(api, headers=headers)).status_code for _ in range(3)]
        assert statuses == [429, 429, 200]
        calls = (await http.get("/_emu/calls")).json()
        assert calls["counts"] == {"auth.test": 3}
        assert calls["ok_counts"] == {"auth.test": 1}
        await http.post("/_emu/faults", json={"status": 503, "count": 5})
        assert (await http.delete("/_emu/faults")).json()["faults"] == []
        assert (await http.post(api, headers=headers)).status_code == 200
        bad = await http.post("/_emu/faults", json={"count": 1})
        assert bad.status_code == 400


async def test_a_fault_rate_fails_that_share_of_calls_and_clears(emulator: SlackEmulator) -> None:
    emulator.faults.set_rate(0.25, statuses=(429, 500), seed=7)
    client = AsyncWebClient(token=TOKEN, base_url=emulator.api_url, retry_handlers=[])
    failed = 0
    for i in range(200):
        try:
            await client.chat_postMessage(channel="general", text=f"m{i}")
        except SlackApiError as e:
            assert e.response.status_code in (429, 500)
            failed += 1
    assert 25 <= failed <= 75  # about a quarter, with a fixed seed
    assert len(emulator.messages("general")) == 200 - failed
    emulator.faults.clear()
    await client.chat_postMessage(channel="general", text="after")
    with pytest.raises(ValueError):
        emulator.faults.set_rate(1.5)
