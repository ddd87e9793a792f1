from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fastapi import FastAPI
from redis.asyncio import Redis

from bot.api import create_app
from bot.core.policy import Policy, parse_policy
from bot.gate.runtime import Runtime
from bot.store.requests import RequestStore
from tests.api.live import TOKEN, LiveServer, live_server, make_runtime
from tests.conftest import QUORUM_POLICY

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def store(signed_store: RequestStore) -> RequestStore:
    """Decisions here are the people's, as serve records them: signed."""
    return signed_store


@pytest.fixture
def runtime(redis: Redis, policy: Policy) -> Runtime:
    return make_runtime(redis, policy)


@pytest.fixture
def app(runtime: Runtime) -> FastAPI:
    return create_app(runtime)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://hitl.test", headers=AUTH
    ) as c:
        yield c


@pytest.fixture(scope="session")
def live(redis_url: str) -> Iterator[LiveServer]:
    """One real server for the session; the per-test flush empties what it sees."""
    with live_server(redis_url, parse_policy(QUORUM_POLICY)) as server:
        yield server
