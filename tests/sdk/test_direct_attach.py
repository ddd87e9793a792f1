"""Direct mode joins the bot's store or fails at once; it never starts a private Valkey."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.policy import Policy
from bot.db.valkey.embedded import ensure_server
from bot.errors import StoreUnavailable
from bot.sdk import Gate
from bot.store import keys
from bot.store.stream.events import NOTIFIER_GROUP


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hs", dir="/tmp"))  # short: a Unix socket lives there
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_no_bot_store_fails_at_once_with_the_fix(data_dir: Path, policy: Policy) -> None:
    gate = Gate(settings=Settings(hitl_data_dir=data_dir, redis_url=None), policy=policy)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        await gate.submit("refund", {"order": "A1", "amount": 5})
    assert time.monotonic() - started < 2
    text = str(caught.value)
    assert str(data_dir) in text and "hitl-bot serve" in text and "REDIS_URL" in text
    assert list(data_dir.iterdir()) == []  # no server was started, nothing was written
    await gate.aclose()


async def test_joins_a_running_bot_store_and_warns_when_no_bot_reads_it(
    data_dir: Path, policy: Policy, caplog: pytest.LogCaptureFixture
) -> None:
    server = await asyncio.to_thread(ensure_server, data_dir)  # as a running `serve` keeps it
    try:
        gate = Gate(settings=Settings(hitl_data_dir=data_dir, redis_url=None), policy=policy)
        with caplog.at_level(logging.WARNING, logger="bot.sdk.attach"):
            req = await gate.submit("refund", {"order": "A1", "amount": 5})
        client = Redis.from_url(server.url, decode_responses=True)
        assert await client.hget(keys.request(req.id), "tool") == "refund"  # the bot's store
        await client.aclose()
        await gate.aclose()
        assert any("No hitl-bot is reading" in r.getMessage() for r in caplog.records)
    finally:
        server.stop()


async def test_no_warning_while_a_notifier_reads(
    redis: Redis, redis_url: str, policy: Policy, caplog: pytest.LogCaptureFixture
) -> None:
    await redis.xgroup_create(keys.events(0), NOTIFIER_GROUP, id="0", mkstream=True)
    await redis.xreadgroup(NOTIFIER_GROUP, "notifier-1", {keys.events(0): ">"}, count=1)
    gate = Gate(settings=Settings(redis_url=SecretStr(redis_url)), policy=policy)
    with caplog.at_level(logging.WARNING, logger="bot.sdk.attach"):
        await gate.submit("refund", {"order": "A1", "amount": 5})
    await gate.aclose()
    assert not [r for r in caplog.records if "No hitl-bot is reading" in r.getMessage()]
