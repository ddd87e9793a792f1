"""Socket Mode as a user runs it: no signing secret, no HTTP Slack endpoint, a link that
reports itself on /healthz, backs off, reconnects and never holds up a stop.

The approval, run and command tests run over Socket Mode too (their `slack_mode` fixture);
this file covers what only Socket Mode has."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.config import Settings
from bot.core.states import State
from bot.sandbox.slack import SlackEmulator
from bot.sandbox.slack.workspace import Message
from bot.server.serve import ServeOptions, run_serve
from bot.slack.blocks import render
from bot.supervise import Backoff
from tests.e2e.conftest import APP_TOKEN, SECRET, TOKEN, Bot, button_values
from tests.support.poll import eventually

FAST = Backoff(first_s=0.05, cap_s=0.5)


@pytest.fixture
def slack_mode() -> str:
    return "socket"


def _signed_form(body: str, secret: str) -> dict[str, str]:
    ts = str(int(time.time()))
    sig = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={sig}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


async def _health(url: str) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.get(url + "/healthz")


async def test_no_http_slack_endpoint_so_forged_clicks_get_404_and_change_nothing(
    bot: Bot,
) -> None:
    rid = await bot.propose("refund", {"amount": 5})
    ch, ts = await bot.message_of(rid)
    card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
    value = button_values(card.blocks)[render.ACTION_APPROVE]
    payload = {
        "type": "block_actions",
        "user": {"id": "UALICE"},
        "team": {"id": "T1"},
        "actions": [{"action_id": render.ACTION_APPROVE, "value": value, "type": "button"}],
        "channel": {"id": ch},
        "container": {"type": "message"},
    }
    body = urlencode({"payload": json.dumps(payload)})
    async with httpx.AsyncClient() as http:
        # "signed" with an empty secret, and with a secret the bot was never given
        for secret in ("", SECRET):
            got = await http.post(
                bot.url + "/slack/events", content=body, headers=_signed_form(body, secret)
            )
            assert got.status_code == 404, got.text
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
    # while the same click over the socket decides it
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved() -> bool:  # the envelope is acked before the listener is done
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)


async def test_healthz_follows_the_link_and_a_dropped_socket_reconnects(bot: Bot) -> None:
    assert (await _health(bot.url)).status_code == 200
    opened = bot.emu.socket.opened
    assert await bot.emu.socket.drop() == 1

    async def reconnected() -> bool:
        return bot.emu.socket.opened > opened and bot.emu.socket.connected == 1

    await eventually(reconnected)

    async def healthy() -> bool:
        return (await _health(bot.url)).status_code == 200

    await eventually(healthy)
    rid = await bot.propose("refund", {"amount": 7})
    ch, ts = await bot.message_of(rid)
    outcome = await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    assert outcome.status == 200

    async def approved() -> bool:  # on_approve acks first, then decides
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)


async def test_disconnect_asked_by_slack_reconnects_at_once_and_loses_no_event(bot: Bot) -> None:
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
    opened = bot.emu.socket.opened
    await bot.emu.socket.disconnect("refresh_requested")
    # Sent before the bot is back: the emulator retries it, as Slack does, until acked.
    reply = await bot.emu.post("UKID", posted.channel, "the penguin instead", posted.ts)
    assert reply.statuses == [200], bot.emu.deliveries[-3:]
    assert bot.emu.socket.opened > opened

    async def queued() -> int:
        return await bot.steering.pending(run_id)

    assert await eventually(queued) == 1
    steer = await bot.steering.pop(run_id)
    assert steer is not None and steer.text == "the penguin instead"


@pytest.mark.parametrize("slack_mode", ["http", "socket"])
async def test_a_retried_event_acts_once(bot: Bot) -> None:
    posted = await bot.emu.post("UKID", "#general", "<@UBOT> Get me the bear!")
    run_id = await eventually(lambda: bot.runs.by_thread(posted.channel, posted.ts))
    channel = bot.emu.workspace.channels[posted.channel]
    reply = bot.emu.workspace.add_message(
        Message(posted.channel, bot.emu.ids.ts(), "left a bit", "UKID", thread_ts=posted.ts)
    )
    envelope = bot.emu.payloads.envelope(bot.emu.payloads.message_event(reply, channel))
    first = await bot.emu.deliverer.send_event(envelope)
    again = await bot.emu.deliverer.send_event(envelope)  # Slack's retry: same event_id
    assert first.ok and again.ok
    await bot.emu.post("UKID", posted.channel, "and down", posted.ts)

    async def both() -> int | None:
        n = await bot.steering.pending(run_id)
        return n if n >= 2 else None

    assert await eventually(both) == 2
    texts = [(await bot.steering.pop(run_id)), (await bot.steering.pop(run_id))]
    # The retry added nothing; the two distinct replies are each queued once (handled
    # as they arrive, after their acks, so either may be first).
    assert sorted(s.text for s in texts if s) == ["and down", "left a bit"]


@contextlib.asynccontextmanager
async def _serving(
    settings: Settings, backoff: Backoff = FAST
) -> AsyncIterator[tuple[str, asyncio.Event, asyncio.Task[None]]]:
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        run_serve(
            settings,
            stop,
            clock=FakeClock(int(time.time() * 1000)),
            on_ready=ready.set_result,
            options=ServeOptions(sweep_interval_s=0.05, socket_backoff=backoff),
        )
    )
    url = await asyncio.wait_for(ready, 10)
    try:
        yield url, stop, task
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)


def _socket_settings(emu: SlackEmulator, redis_url: str, app_token: str, **kw: Any) -> Settings:
    return Settings(
        slack_bot_token=TOKEN,
        slack_app_token=app_token,
        slack_api_url=emu.api_url,
        redis_url=redis_url,
        hitl_port=0,
        **kw,
    )


async def test_a_refused_app_token_is_unhealthy_with_the_reason_and_backs_off(
    redis_url: str, redis: Redis
) -> None:
    async with SlackEmulator(bot_token=TOKEN, app_token=APP_TOKEN) as emu:
        settings = _socket_settings(emu, redis_url, "xapp-revoked")
        async with _serving(settings) as (url, _, task):

            async def refused() -> Any:
                got = await _health(url)
                return got if got.status_code == 503 else None

            got = await eventually(refused)
            assert "invalid_auth" in got.json()["detail"], got.text
            started = time.monotonic()
            await eventually(lambda: _opens(emu, 4))
            elapsed = time.monotonic() - started
            # Backoff: first 50 ms, doubling to a 0.5 s cap, each cut by up to half. Without
            # it the bot would call Slack hundreds of times a second.
            assert _count_opens(emu) <= 6 + elapsed / 0.25
            # The token is fixed on Slack's side: the next attempt connects.
            emu.socket.app_token = "xapp-revoked"

            async def healthy() -> bool:
                return (await _health(url)).status_code == 200

            await eventually(healthy)
            assert emu.socket.connected == 1
        stop_took = time.monotonic()
        assert task.done()
    assert time.monotonic() - stop_took < 5


def _count_opens(emu: SlackEmulator) -> int:
    return emu.calls.count("apps.connections.open")


async def _opens(emu: SlackEmulator, n: int) -> bool:
    return _count_opens(emu) >= n


async def test_stop_during_a_connect_that_never_answers_ends_serve_promptly(
    redis_url: str, redis: Redis
) -> None:
    # A Slack that accepts the TCP connection and then says nothing.
    held: list[asyncio.StreamWriter] = []

    async def say_nothing(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    hung = await asyncio.start_server(say_nothing, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    try:
        async with SlackEmulator(bot_token=TOKEN, app_token=APP_TOKEN) as emu:
            settings = _socket_settings(emu, redis_url, APP_TOKEN)
            settings = settings.model_copy(
                update={"slack_api_url": f"http://127.0.0.1:{port}/api/"}
            )
            async with _serving(settings) as (url, stop, task):
                got = await _health(url)
                assert got.status_code == 503
                assert "not connected" in got.json()["detail"]
                stop.set()
                # Without the stop reaching it, serve would wait out the Web API client's
                # 10 s timeout; 8 s tells the two apart on a busy machine too.
                await asyncio.wait_for(asyncio.shield(task), 8)
    finally:
        for writer in held:
            writer.close()
        hung.close()
        await hung.wait_closed()


async def test_serve_refuses_http_mode_without_a_signing_secret(redis_url: str) -> None:
    from bot.errors import ConfigError

    settings = Settings(slack_bot_token=TOKEN, redis_url=redis_url, hitl_port=0)
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET"):
        await run_serve(settings, asyncio.Event())


def test_the_start_line_names_the_mode_and_where_events_come_from(tmp_path: Path) -> None:
    from bot.server.serve import ready_line

    http = Settings(slack_signing_secret=SECRET)
    socket = Settings(slack_app_token=APP_TOKEN, slack_api_url="http://127.0.0.1:9/api/")
    assert "over HTTP at http://h:1/slack/events" in ready_line(http, "http://h:1")
    line = ready_line(socket, "http://h:1")
    assert "Socket Mode from http://127.0.0.1:9/api/" in line
    assert "/slack/events" not in line.replace("no HTTP Slack endpoint", "")
