"""A gate in each mode, and a reviewer who decides from another thread, as Slack would."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.config import Settings
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.db import hub
from bot.sdk import Gate
from bot.store.requests import Moved, RequestStore
from tests.api.live import AGENT_TOKEN, LiveServer, live_server
from tests.conftest import QUORUM_POLICY
from tests.support.keys import serve_signer
from tests.support.poll import eventually


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
            pending = await eventually(store.list_pending, what="a request in review")
            req = pending[0]
            self.seen.append(req)
            for make in decisions:
                await caller_waits()
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


def waiters_in_this_process() -> int:
    """The waits every wait hub of this process holds: the direct gate's own, and the live
    API server's, which runs on a thread of this process, for a gate over HTTP."""
    return sum(h.waiting for h in list(hub._hubs.values()))


async def caller_waits() -> None:
    """Until the gate waits for the decision, so that the decision wakes it."""
    await eventually(
        lambda: waiters_in_this_process() > 0,
        what="the caller waiting",
        ignoring=(RuntimeError,),  # the hubs changed while they were counted: count again
    )


@pytest.fixture
def reviewer(redis: Redis, redis_url: str) -> Reviewer:
    return Reviewer(redis_url)
