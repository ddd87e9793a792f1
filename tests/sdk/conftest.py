"""A gate in each mode, and a reviewer who decides from another thread, as Slack would."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.config import Settings
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.sdk import Gate
from bot.store.requests import Moved, RequestStore
from tests.api.live import AGENT_TOKEN, LiveServer, live_server
from tests.conftest import QUORUM_POLICY
from tests.keys import serve_signer


@pytest.fixture(scope="session")
def live(redis_url: str) -> Iterator[LiveServer]:
    with live_server(redis_url, parse_policy(QUORUM_POLICY)) as server:
        yield server


def direct_gate(redis_url: str, policy: Policy, **kw: float) -> Gate:
    settings = Settings(redis_url=SecretStr(redis_url))
    return Gate(settings=settings, policy=policy, requester="agent-7", **kw)


@pytest.fixture(params=["direct", "http"])
async def gate(
    request: pytest.FixtureRequest, redis: Redis, redis_url: str, policy: Policy
) -> AsyncIterator[Gate]:
    if request.param == "direct":
        g = direct_gate(redis_url, policy)
    else:
        live: LiveServer = request.getfixturevalue("live")
        # over HTTP the requester is the token's identity: agent-7 has a token of its own
        g = Gate(api_url=live.url, api_token=AGENT_TOKEN, requester="agent-7")
    try:
        yield g
    finally:
        await g.aclose()


@pytest.fixture
def wall_store(redis: Redis) -> RequestStore:
    return RequestStore(redis, clock=wall_ms, signer=serve_signer())  # decides as serve


Decide = Callable[[ActionRequest], Decision]


class Reviewer:
    """Waits for the next request in review and decides it, on its own thread and loop."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.seen: list[ActionRequest] = []
        self.moved: list[Moved] = []
        self.error: BaseException | None = None
        self._threads: list[threading.Thread] = []

    def decide(self, *decisions: Decide, clock: Callable[[], int] = wall_ms) -> None:
        """Decide the next request with each decision in turn (escalations: several)."""
        t = threading.Thread(target=self._run, args=(decisions, clock), daemon=True)
        t.start()
        self._threads.append(t)

    def _run(self, decisions: tuple[Decide, ...], clock: Callable[[], int]) -> None:
        try:
            asyncio.run(self._main(decisions, clock))
        except BaseException as exc:
            self.error = exc

    async def _main(self, decisions: tuple[Decide, ...], clock: Callable[[], int]) -> None:
        redis = Redis.from_url(self.redis_url, decode_responses=True)
        try:
            store = RequestStore(redis, clock=clock, signer=serve_signer())  # as serve does
            deadline = time.monotonic() + 10
            while not (pending := await store.list_pending()):
                assert time.monotonic() < deadline, "no request came for review"
                await asyncio.sleep(0.01)
            req = pending[0]
            self.seen.append(req)
            for make in decisions:
                await asyncio.sleep(0.05)  # the caller is waiting by now
                req = await store.get(req.id)
                moved = await store.transition(req.id, make(req))
                self.moved.append(moved)
        finally:
            await redis.aclose()

    def join(self) -> None:
        for t in self._threads:
            t.join(10)
        if self.error is not None:
            raise self.error

    async def ajoin(self) -> None:
        await asyncio.to_thread(self.join)


@pytest.fixture
def reviewer(redis: Redis, redis_url: str) -> Reviewer:
    return Reviewer(redis_url)
