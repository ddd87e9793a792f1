"""Events API delivery: signed envelopes, message / app_mention / app_home_opened shapes,
and Slack's retries when the bot is slow or failing."""

from __future__ import annotations

import asyncio
import json

import httpx
from slack_sdk.web.async_client import AsyncWebClient
from starlette.responses import Response

from bot.sandbox.slack import SlackEmulator, signature
from tests.sandbox.conftest import SECRET, FakeBot, Received
from tests.support.poll import eventually


def test_signature_is_slacks_v0_scheme() -> None:
    # the worked example from Slack's signing documentation
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&"
        b"channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&"
        b"command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2F"
        b"commands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
        b"trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert signature("8f742231b10e8888abcd99yyyzzz85a5", "1531420618", body) == expected


async def test_message_event_in_a_thread(emulator: SlackEmulator, fake_bot: FakeBot) -> None:
    parent = await emulator.post("alice", "#hitl-approvals", "parent")
    posted = await emulator.post("bob", "#hitl-approvals", "steer: smaller", thread_ts=parent.ts)
    assert posted.statuses == [200]
    assert fake_bot.bad_signatures == 0
    envelope = fake_bot.events()[-1]
    assert envelope["type"] == "event_callback"
    assert envelope["event_id"] == posted.event_ids[0]
    assert envelope["team_id"] == "TEMULATOR" and envelope["api_app_id"] == "AHITLBOT"
    assert isinstance(envelope["event_time"], int)
    event = envelope["event"]
    assert event["type"] == "message" and "subtype" not in event
    assert (event["channel"], event["user"], event["text"]) == (
        "CHITLAPPROVALS",
        "UBOB",
        "steer: smaller",
    )
    assert event["ts"] == posted.ts and event["thread_ts"] == parent.ts != posted.ts
    assert event["channel_type"] == "channel"
    assert "thread_ts" not in fake_bot.events()[0]["event"]
    assert len({e["event_id"] for e in fake_bot.events()}) == 2


async def test_a_reply_also_sent_to_the_channel_and_one_with_a_file(
    emulator: SlackEmulator, fake_bot: FakeBot
) -> None:
    parent = await emulator.post("alice", "#hitl-approvals", "parent")
    reply = await emulator.post(
        "bob", "#hitl-approvals", "approve", thread_ts=parent.ts, broadcast=True
    )
    event = fake_bot.events()[-1]["event"]
    assert event["subtype"] == "thread_broadcast" and event["user"] == "UBOB"
    assert event["ts"] == reply.ts and event["thread_ts"] == parent.ts
    assert event["root"]["ts"] == parent.ts and event["root"]["text"] == "parent"
    await emulator.post("bob", "#hitl-approvals", "see this", thread_ts=reply.ts, file_name="a.png")
    event = fake_bot.events()[-1]["event"]
    assert event["subtype"] == "file_share" and event["thread_ts"] == parent.ts
    assert event["text"] == "see this" and event["files"][0]["name"] == "a.png"
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        alone = await http.post(
            "/_emu/post",
            json={"user": "bob", "channel": "#hitl-approvals", "text": "x", "broadcast": True},
        )
        assert alone.status_code == 400 and "thread reply" in alone.text
        sent = await http.post(
            "/_emu/post",
            json={
                "user": "bob",
                "channel": "#hitl-approvals",
                "text": "too",
                "thread_ts": parent.ts,
                "broadcast": True,
            },
        )
        assert sent.status_code == 200
    assert fake_bot.events()[-1]["event"]["subtype"] == "thread_broadcast"


async def test_mention_sends_message_and_app_mention(
    emulator: SlackEmulator, fake_bot: FakeBot
) -> None:
    posted = await emulator.post("carol", "general", "<@UBOT> status?")
    kinds = sorted(e["event"]["type"] for e in fake_bot.events())
    assert kinds == ["app_mention", "message"]
    mention = next(e["event"] for e in fake_bot.events() if e["event"]["type"] == "app_mention")
    assert mention["user"] == "UCAROL" and mention["ts"] == posted.ts
    assert mention["text"] == "<@UBOT> status?" and mention["channel"] == "CGENERAL"
    # in the bot's DM a mention is just a message
    fake_bot.received.clear()
    dm = await emulator.post("carol", "UBOT", "<@UBOT> hi")
    assert [e["event"]["type"] for e in fake_bot.events()] == ["message"]
    assert fake_bot.events()[0]["event"]["channel_type"] == "im"
    assert dm.channel.startswith("D")


async def test_app_home_opened_carries_the_published_view(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    await emulator.open_home("kid")
    first = fake_bot.events()[-1]["event"]
    assert first["type"] == "app_home_opened" and first["user"] == "UKID"
    assert first["tab"] == "home" and "view" not in first
    await client.views_publish(user_id="UKID", view={"type": "home", "blocks": []})
    await emulator.open_home("kid")
    assert fake_bot.events()[-1]["event"]["view"]["type"] == "home"


async def test_slow_bot_gets_a_retry_with_the_same_event_id(
    emulator: SlackEmulator, fake_bot: FakeBot
) -> None:
    tried_again = asyncio.Event()

    async def slow_first(received: Received) -> Response:
        if "x-slack-retry-num" in received.headers:
            tried_again.set()
        else:
            await tried_again.wait()  # past Slack's 3 s: answered once Slack tried again
        return Response(status_code=200)

    fake_bot.behaviour = slow_first
    try:
        posted = await emulator.post("alice", "general", "hello")
    finally:
        tried_again.set()
    assert posted.statuses == [200]
    attempts = [d for d in emulator.deliveries if d.kind == "event"]
    assert [(d.retry_num, d.error) for d in attempts] == [(0, "http_timeout"), (1, None)]
    assert attempts[0].latency_ms >= 2900
    retried = fake_bot.received[-1]
    assert retried.headers["x-slack-retry-num"] == "1"
    assert retried.headers["x-slack-retry-reason"] == "http_timeout"
    event_ids = {r.json()["event_id"] for r in fake_bot.received}
    assert event_ids == {posted.event_ids[0]}


async def test_three_retries_then_slack_gives_up(fake_bot: FakeBot) -> None:
    emu = SlackEmulator(SECRET, "xoxb-t", fake_bot.url, ack_timeout=0.2, retry_delays=(0, 0, 0))
    await emu.start()
    gave_up = asyncio.Event()
    try:

        async def always_slow(received: Received) -> Response:
            await gave_up.wait()  # no attempt is answered before Slack stops trying
            return Response(status_code=200)

        fake_bot.behaviour = always_slow
        posted = await emu.post("alice", "general", "hello")
        gave_up.set()
        assert posted.statuses == [None]
        nums = [d.retry_num for d in emu.deliveries]
        assert nums == [0, 1, 2, 3]
        # the abandoned attempts still reach the bot: wait for all four, however slow
        await eventually(lambda: len(fake_bot.received) >= 4)
        assert [r.headers.get("x-slack-retry-num") for r in fake_bot.received] == [
            None,
            "1",
            "2",
            "3",
        ]
        assert len({json.loads(r.body)["event_id"] for r in fake_bot.received}) == 1
    finally:
        gave_up.set()
        await emu.stop()


async def test_errors_are_retried_as_http_error_until_no_retry(
    emulator: SlackEmulator, fake_bot: FakeBot
) -> None:
    async def fail_then_refuse(received: Received) -> Response:
        if received.headers.get("x-slack-retry-num") == "1":
            return Response(status_code=500, headers={"X-Slack-No-Retry": "1"})
        return Response(status_code=503)

    fake_bot.behaviour = fail_then_refuse
    await emulator.post("alice", "general", "hello")
    assert [(d.status, d.retry_num, d.retry_reason) for d in emulator.deliveries] == [
        (503, 0, None),
        (500, 1, "http_error"),
    ]


async def test_post_without_waiting_then_settle(emulator: SlackEmulator, fake_bot: FakeBot) -> None:
    posted = await emulator.post("alice", "general", "later", wait=False)
    assert posted.statuses == []
    await emulator.settle()
    assert [e["event"]["ts"] for e in fake_bot.events()] == [posted.ts]


async def test_bot_messages_echo_only_when_asked(fake_bot: FakeBot) -> None:
    emu = SlackEmulator(SECRET, "xoxb-t", fake_bot.url, echo_bot_messages=True)
    await emu.start()
    try:
        client = AsyncWebClient(token="xoxb-t", base_url=emu.api_url)
        posted = await client.chat_postMessage(channel="general", text="from the bot")
        await client.chat_update(channel="CGENERAL", ts=posted["ts"], text="edited")
        await emu.settle()
        events = [e["event"] for e in fake_bot.events()]
        assert events[0]["bot_id"] == "BBOT" and events[0]["user"] == "UBOT"
        assert events[1]["subtype"] == "message_changed"
        assert events[1]["message"]["text"] == "edited"
    finally:
        await emu.stop()


async def test_no_events_url_records_the_miss(emulator: SlackEmulator) -> None:
    posted = await emulator.post("alice", "general", "nobody listens")
    assert posted.statuses == [None]
    assert emulator.deliveries[0].error == "no_events_url"
    assert emulator.messages("general")[0].text == "nobody listens"


async def test_a_slack_connect_members_message_names_their_own_team(
    emulator: SlackEmulator, fake_bot: FakeBot
) -> None:
    from bot.sandbox.slack.workspace import User

    emulator.workspace.users["UEXT"] = User("UEXT", "ext", "External", team_id="TOTHER")
    emulator.workspace.channels["CHITLAPPROVALS"].members.append("UEXT")
    await emulator.post("UEXT", "#hitl-approvals", "hello from Acme")
    event = fake_bot.events()[-1]["event"]
    assert (event["user"], event["team"], event["user_team"]) == ("UEXT", "TOTHER", "TOTHER")
    await emulator.post("alice", "#hitl-approvals", "hello")
    home = fake_bot.events()[-1]["event"]
    assert home["team"] == "TEMULATOR" and "user_team" not in home
