"""The follower of a process's runs (bot/store/run/run_signals.py) lives as long as the store
it follows: a closed runtime leaves no subscription behind, and a server that is gone is
reported once, not once per retry."""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from bot.config import Settings
from bot.gate.runtime import open_runtime
from bot.store.run.run_signals import close_signals, signals_for
from tests.support.poll import eventually

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("HITL_TEST_CLUSTER")), reason="one Redis: nobody follows runs on a cluster"
)


def _following() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if "_follow" in repr(t.get_coro())]


async def _pubsub_clients(redis: Redis) -> int:
    return len(await redis.client_list(_type="pubsub"))


async def test_a_closed_runtime_leaves_no_subscription_behind(redis_url: str, redis: Redis) -> None:
    async with open_runtime(Settings(redis_url=redis_url)) as rt:
        signals = signals_for(rt.requests.redis)
        assert signals is not None
        signals.watch("run-closing")
        assert await eventually(lambda: _pubsub_clients(redis), lambda n: n == 1) == 1
    assert await eventually(lambda: _pubsub_clients(redis), lambda n: n == 0) == 0
    assert _following() == []


async def test_a_server_that_is_gone_is_reported_once_per_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # No retries inside redis-py: each of the follower's attempts fails at once.
    client = Redis(host="127.0.0.1", port=port, retry=Retry(NoBackoff(), 0))
    caplog.set_level(logging.DEBUG, logger="bot.store.run.run_signals")
    signals = signals_for(client)
    assert signals is not None
    try:
        signals.watch("run-unreachable")

        def tries() -> int:
            return sum("subscription lost" in r.getMessage() for r in caplog.records)

        await eventually(lambda: tries() >= 2, lambda enough: enough, timeout_s=30)
        lost = [r for r in caplog.records if "subscription lost" in r.getMessage()]
        assert [r.levelno for r in lost].count(logging.WARNING) == 1
        assert not signals.clear("run-unreachable")
    finally:
        await close_signals(client)
        await client.aclose()
    assert _following() == []
