"""The agent side against a real Valkey and the scripted model on a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.agent.llm import ChatClient
from bot.agent.loader import Agent
from bot.agent.loop import LoopConfig, RunLoop
from bot.agent.loop import Stores as AgentStores
from bot.clock import wall_ms
from bot.core.models import ActionRequest, Decision, Run
from bot.core.policy import Policy, parse_policy
from bot.core.states import Event
from bot.sandbox.model import Responder, ScriptedModel, Turn
from bot.store.requests import RequestStore
from bot.store.stores import StoreSet
from tests.support.keys import serve_signer
from tests.support.poll import DEFAULT_TIMEOUT_S, eventually

AGENT_POLICY = parse_policy(
    {
        "tiers": {
            tier: {"review_timeout": "10m", "reviewers": {"users": ["UKID"]}, "approvers": ["*"]}
            for tier in ("low", "medium", "high", "critical")
        },
    }
)


class AheadClock:
    """The wall clock, moved ahead when told: a wait looks long without taking long."""

    def __init__(self) -> None:
        self.ahead_ms = 0

    def __call__(self) -> int:
        return wall_ms() + self.ahead_ms

    def advance(self, ms: int) -> None:
        self.ahead_ms += ms


@dataclass(frozen=True)
class Stores(AgentStores):
    """The agent's stores, plus what a test does as the people in the loop."""

    @property
    def redis(self) -> Redis:
        """The test's own look at the store's Redis (the code under test holds no client)."""
        return self.requests.redis

    def loop(
        self,
        agent: Agent,
        llm: ChatClient,
        config: LoopConfig | None = None,
        *,
        policy: Policy | None = None,
    ) -> RunLoop:
        return RunLoop(agent, llm, self if policy is None else replace(self, policy=policy), config)

    async def start(self, agent: str = "test", prompt: str = "go") -> Run:
        return await self.runs.start(agent=agent, prompt=prompt, requester="UASKER", channel="C1")

    async def decide(self, rid: str, event: Event = Event.APPROVE, **kw: Any) -> ActionRequest:
        req = await self.requests.get(rid)
        d = Decision(
            event=event, actor=kw.pop("actor", "UKID"), payload_hash=req.payload_hash, **kw
        )
        # as serve records a person's decision: signed with its key
        signed = RequestStore(self.requests.redis, clock=self.clock, signer=serve_signer())
        return (await signed.transition(rid, d)).request

    async def waiting_on(self, run_id: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
        """The id the run waits on, once it waits."""
        run = await eventually(
            lambda: self.runs.get(run_id),
            lambda r: bool(r.waiting_on),
            what=f"run {run_id} waiting on something",
            timeout_s=timeout_s,
        )
        assert run.waiting_on
        return run.waiting_on


@pytest.fixture
def stores(redis: Redis) -> Stores:
    return Stores.on(StoreSet(redis), AGENT_POLICY)  # the wall clock: deadlines here are real


ModelFactory = Callable[[Responder | Iterable[Turn]], Awaitable[ScriptedModel]]


@pytest.fixture
async def scripted() -> AsyncIterator[ModelFactory]:
    """Start scripted models on free loopback ports; all stop after the test."""
    started: list[ScriptedModel] = []

    async def make(script: Responder | Iterable[Turn]) -> ScriptedModel:
        model = ScriptedModel(script)
        await model.start()
        started.append(model)
        return model

    yield make
    for m in started:
        await m.stop()


@pytest.fixture
async def llm_for() -> AsyncIterator[Callable[[ScriptedModel], ChatClient]]:
    clients: list[ChatClient] = []

    def make(model: ScriptedModel) -> ChatClient:
        client = ChatClient(model.base_url, "scripted", backoff_s=0.01, max_retries=3)
        clients.append(client)
        return client

    yield make
    for c in clients:
        await c.aclose()
