"""A run's calls are read through the run's index of them: `hitl-bot show RUN` reads the
run's own requests, not every request filed since the run started, on one Redis (the
create script writes the index) and on a cluster (a step of its own)."""

from __future__ import annotations

import json
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster

from bot.core.policy import Policy
from bot.store import keys
from bot.store.run.runs import RunStore
from bot.store.stores import StoreSet
from tests.cli.test_cli import cli

REFUND = {"amount": 5, "to": "c1"}


# What clients and replicas send whatever is read (a connection's set-up, replication),
# and the XREAD of a wait hub's reader an earlier test on this worker left blocking: it
# returns and blocks again on its own clock (`show RUN` never waits), and was once
# counted into a measurement here.
PLUMBING = (
    "replconf", "info", "cluster", "ping", "client", "hello", "command", "select", "xread",
)  # fmt: skip


async def _commands(redis: Redis) -> dict[str, int]:
    """The data commands the store has served, by name, summed over a cluster's nodes."""
    if isinstance(redis, RedisCluster):
        per_node = [
            await redis.info("commandstats", target_nodes=node) for node in redis.get_nodes()
        ]
    else:
        per_node = [await redis.info("commandstats")]
    stats = [cast(dict[str, Any], i) for i in per_node]
    out: dict[str, int] = {}
    for s in stats:
        for k, v in s.items():
            if not k.removeprefix("cmdstat_").startswith(PLUMBING):
                out[k] = out.get(k, 0) + int(v.get("calls", 0))
    return out


async def test_a_runs_requests_are_its_own_read_through_its_index(
    redis: Redis, policy: Policy
) -> None:
    store = StoreSet(redis)
    run = await store.runs.start(agent="claw", prompt="look", requester="U1")
    first = await store.requests.create(
        policy, tool="refund", args=REFUND, requester="U1", run_id=run.id, idempotency_key="k1"
    )
    again = await store.requests.create(  # a retry of the same call: one request
        policy, tool="refund", args=REFUND, requester="U1", run_id=run.id, idempotency_key="k1"
    )
    second = await store.requests.create(
        policy, tool="refund", args={"amount": 6, "to": "c2"}, requester="U1", run_id=run.id
    )
    await store.requests.create(policy, tool="refund", args=REFUND, requester="U2", run_id="x")
    await store.requests.create(policy, tool="refund", args=REFUND, requester="U2")
    await redis.zadd(keys.run_requests(run.id), {"req-never-written": 0})  # a crash's entry

    assert again.request.id == first.request.id and not again.created
    got = await store.requests.of_run(run.id)
    assert [r.id for r in got] == [first.request.id, second.request.id]
    assert all(r.run_id == run.id for r in got)
    assert await redis.ttl(keys.run_requests(run.id)) > 0


async def test_show_run_reads_the_runs_own_requests_not_every_later_one(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    runs = RunStore(redis)
    store = StoreSet(redis)
    run = await runs.start(agent="claw", prompt="look", requester="U1")
    mine = await store.requests.create(
        policy, tool="refund", args=REFUND, requester="U1", run_id=run.id
    )

    async def commands_of_show() -> dict[str, int]:
        before = await _commands(redis)
        code, out, err = await cli("show", run.id, "--json", redis_url=redis_url)
        assert code == 0, err
        assert [r["id"] for r in json.loads(out)["requests"]] == [mine.request.id]
        after = await _commands(redis)
        return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}

    few = await commands_of_show()
    for i in range(60):  # history made after the run started, under other runs and none
        await store.requests.create(
            policy, tool="refund", args={"amount": i, "to": "c9"}, requester="U2", run_id="y"
        )
    assert await commands_of_show() == few


async def test_maintenance_indexes_requests_filed_before_the_index(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    store = StoreSet(redis)
    run = await store.runs.start(agent="claw", prompt="look", requester="U1")
    made = await store.requests.create(
        policy, tool="refund", args=REFUND, requester="U1", run_id=run.id
    )
    await redis.delete(keys.run_requests(run.id))  # as a store from before the index
    assert await store.requests.of_run(run.id) == []

    code, out, err = await cli("maintenance", "index-runs", redis_url=redis_url)
    assert code == 0, err
    assert "and 1 requests" in out
    assert [r.id for r in await store.requests.of_run(run.id)] == [made.request.id]
