"""The bot on a live 3-primary + 3-replica Valkey Cluster, REDIS_URL at one node.

Each test fails on a bot that opens a single-server client (MOVED for every
shard on another node) or that sends one command across slots (CROSSSLOT).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.api import create_app
from bot.clock import FakeClock
from bot.config import Settings
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db.cluster import is_cluster
from bot.db.connection import connect
from bot.deadlines.sweeper import Sweeper
from bot.gate.execution import wait_request
from bot.store import keys
from bot.store.figures.metrics import MetricsCollector, render
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.stream.events import EventBus, Notice
from tests.api.live import TOKEN, make_runtime
from tests.cli.test_cli import cli
from tests.cluster.conftest import one_id_per_shard
from tests.support.localcluster import LocalCluster

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def redis(cluster: LocalCluster) -> AsyncIterator[Redis]:
    """Through the bot's own connect(), at a replica's URL: any node must do."""
    cluster.flush()
    replica = cluster.nodes[-1]
    settings = Settings(redis_url=SecretStr(f"redis://127.0.0.1:{replica.port}/0"))
    client, server = await connect(settings)
    assert server is None
    try:
        yield client
    finally:
        await client.aclose()


async def _one_per_shard(store: RequestStore, policy: Policy) -> list[str]:
    ids = iter(one_id_per_shard())
    store.ids = lambda: next(ids)
    made = []
    for amount in range(keys.SHARDS):
        req = await store.create(policy, tool="refund", args={"amount": amount}, requester="U1")
        made.append(req.request.id)
    assert {keys.shard_of(rid) for rid in made} == set(range(keys.SHARDS))
    return made


async def test_connect_at_any_node_gives_a_client_that_works_on_every_shard(
    redis: Redis, policy: Policy
) -> None:
    assert is_cluster(redis)
    store = RequestStore(redis)
    made = await _one_per_shard(store, policy)
    for rid in made:
        req = await store.get(rid)
        await store.transition(
            rid, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        )
    assert {(await store.get(rid)).state for rid in made} == {State.APPROVED}
    assert sorted(await store.ids_between()) == sorted(made)


async def test_events_of_every_shard_are_read_counted_and_summed(
    redis: Redis, policy: Policy
) -> None:
    made = await _one_per_shard(RequestStore(redis), policy)
    bus = EventBus(redis, "slack")
    await bus.ensure_group()
    collector = MetricsCollector(redis, consumer="m1")
    await collector.bus.ensure_group()
    seen: list[Notice] = []
    deadline = time.monotonic() + 30
    while len(seen) < len(made) and time.monotonic() < deadline:
        seen += await bus.read("n1", block_ms=200)
    assert sorted(n.id for n in seen) == sorted(made)
    counted = 0
    while counted < len(made) and time.monotonic() < deadline:
        for n in await collector.bus.read("m1", block_ms=200):
            await collector.count(n)
            counted += 1
    text = await render(redis)
    assert f"hitl_requests_created_total {len(made)}" in text
    assert "hitl_outbox_depth 16" in text  # read by "n1", not yet acknowledged


async def test_sweeper_fires_every_shard_without_cross_slot_pipelines(
    redis: Redis, policy: Policy
) -> None:
    clock = FakeClock()
    store = RequestStore(redis, clock=clock)
    made = await _one_per_shard(store, policy)
    clock.advance(11 * 60_000)
    sweeper = Sweeper(store, QuestionStore(redis, clock=clock), clock=clock)
    stats = await sweeper.sweep_once()
    assert stats.fired == len(made)
    assert {(await store.get(rid)).level for rid in made} == {1}


async def test_api_and_direct_waits_on_a_cluster(redis: Redis, policy: Policy) -> None:
    app = create_app(make_runtime(redis, policy))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=auth) as c:
        ids = []
        for n in range(keys.SHARDS):
            r = await c.post("/v1/approvals", json={"tool": "refund", "args": {"amount": n}})
            assert r.status_code == 201, r.text
            ids.append(r.json()["id"])
        assert len({keys.shard_of(i) for i in ids}) > 3  # random ids: several nodes
        store = RequestStore(redis)
        waiting = asyncio.create_task(wait_request(store, ids[0], 30))
        req = await store.get(ids[0])
        await store.transition(
            ids[0], Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        )
        assert (await waiting).state == State.APPROVED
        got = await c.get(f"/v1/approvals/{ids[1]}")
        assert got.status_code == 200 and got.json()["state"] == "pending_review"
        metrics = await c.get("/metrics")
        assert metrics.status_code == 200


async def test_cli_commands_with_redis_url_at_a_cluster_node(
    redis: Redis, policy: Policy, cluster: LocalCluster
) -> None:
    made = await _one_per_shard(RequestStore(redis), policy)
    url = f"redis://127.0.0.1:{cluster.nodes[1].port}/0"
    code, out, err = await cli("pending", "--json", redis_url=url)
    assert code == 0, err
    assert sorted(r["id"] for r in json.loads(out)) == sorted(made)
    code, out, err = await cli("show", made[5], redis_url=url)
    assert code == 0 and "intact" in out, err
    code, out, err = await cli("audit", "verify", redis_url=url)
    assert code == 0, err
