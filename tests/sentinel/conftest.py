"""One primary, two replicas and three sentinels for each module here: the failover
test kills the primary, and every test connects through the sentinels."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.db.connection import connect
from tests.support.localsentinel import LocalSentinel


@pytest.fixture(scope="module")
def sentinel() -> Iterator[LocalSentinel]:
    s = LocalSentinel().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
async def client(sentinel: LocalSentinel) -> AsyncIterator[Redis]:
    """The bot's own client of the primary, through the sentinels, on an empty database."""
    redis, _ = await connect(Settings(redis_url=SecretStr(sentinel.url)))
    try:
        await redis.flushdb()
        yield redis
    finally:
        await redis.aclose()
