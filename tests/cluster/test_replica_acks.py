"""HITL_REPLICA_ACKS on a 3+3 cluster: a decision or a claim acknowledged with replica
acks survives `kill -9` of its primary; one the replicas did not confirm is never
acknowledged; and without acks, the window the README measures is real.

A stalled replica (SIGSTOP) whose link the primary closed makes the window wide enough
to hit every time: a write acknowledged then is on the primary only, and the replica
promoted after the kill never saw it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db import replicas
from bot.db.cluster import TRANSIENT
from bot.db.connection import connect
from bot.errors import NotReplicated
from bot.gate.claims import claim_checked
from bot.gate.runtime import Runtime
from bot.store import keys
from tests.api.live import make_runtime
from tests.support.localcluster import LocalCluster, Node
from tests.support.poll import eventually, eventually_sync

pytestmark = pytest.mark.timeout(240)
FAILOVER_S = 60.0


@contextlib.asynccontextmanager
async def runtime(cluster: LocalCluster, policy: Policy, acks: int) -> AsyncIterator[Runtime]:
    settings = Settings(
        redis_url=SecretStr(cluster.url), hitl_replica_acks=acks, hitl_replica_ack_timeout_ms=300
    )
    client, _ = await connect(settings)
    try:
        yield make_runtime(client, policy)
    finally:
        await client.aclose()


def primary_of(cluster: LocalCluster, client: Redis, rid: str) -> Node:
    node = client.get_node_from_key(keys.request(rid))  # type: ignore[attr-defined]
    return cluster.at_port(int(node.port))


async def created(rt: Runtime, policy: Policy, n: int) -> ActionRequest:
    made = await rt.requests.create(
        policy, tool="refund", args={"amount": n, "to": "cus_1"}, requester="agent"
    )
    return made.request


def approve(req: ActionRequest) -> Decision:
    return Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)


async def state_after_failover(rt: Runtime, rid: str) -> State:
    """The request's state once its slot answers again (a replica took over)."""

    async def read() -> State | None:
        try:
            return (await rt.requests.get(rid)).state
        except TRANSIENT:
            return None

    return await eventually(read, what="the slot served again", timeout_s=FAILOVER_S)


def caught_up(primary: Node, replica: Node) -> None:
    def same() -> bool:
        with primary.client() as p, replica.client() as r:
            return int(p.info("replication")["master_repl_offset"]) == int(
                r.info("replication")["slave_repl_offset"]
            )

    eventually_sync(same, what="the replica caught up", timeout_s=FAILOVER_S)


async def kill_and_rejoin(cluster: LocalCluster, rt: Runtime, rid: str, victim: Node) -> State:
    cluster.kill(victim)
    state = await state_after_failover(rt, rid)
    cluster.wait_failover(FAILOVER_S)
    cluster.restart(victim)  # back as a replica: the next test has its 3+3 again
    return state


@pytest.fixture
async def acked(cluster: LocalCluster, policy: Policy) -> AsyncIterator[Runtime]:
    cluster.wait_ok(FAILOVER_S)
    async with runtime(cluster, policy, acks=1) as rt:
        yield rt


async def test_an_acknowledged_approve_survives_the_primary(
    cluster: LocalCluster, acked: Runtime, policy: Policy
) -> None:
    req = await created(acked, policy, 10)
    await acked.requests.transition(req.id, approve(req))  # acknowledged: replicas hold it
    victim = primary_of(cluster, acked._redis, req.id)
    assert await kill_and_rejoin(cluster, acked, req.id, victim) == State.APPROVED


async def test_an_acknowledged_claim_survives_the_primary(
    cluster: LocalCluster, acked: Runtime, policy: Policy
) -> None:
    req = await created(acked, policy, 11)
    await acked.requests.transition(req.id, approve(req))
    claimed = await claim_checked(acked.requests, req.id, actor="executor-1", check=acked.claims)
    assert claimed.state == State.EXECUTING
    victim = primary_of(cluster, acked._redis, req.id)
    assert await kill_and_rejoin(cluster, acked, req.id, victim) == State.EXECUTING
    again = await acked.requests.get(req.id)
    assert again.version == claimed.version  # the same claim, not one a second executor made


async def test_a_stalled_replica_means_not_saved_and_a_retry_saves_it(
    cluster: LocalCluster, acked: Runtime, policy: Policy
) -> None:
    req = await created(acked, policy, 12)
    primary = primary_of(cluster, acked._redis, req.id)
    (replica,) = cluster.replicas_of(primary)
    timeouts = replicas.COUNTS["timeout"]
    replica.pause()
    try:
        with pytest.raises(NotReplicated, match="Not yet saved"):
            await acked.requests.transition(req.id, approve(req))
        assert replicas.COUNTS["timeout"] == timeouts + 1
    finally:
        replica.resume()
    # The same click again: the decision is on the primary already (a repeat), and now
    # the replica confirms it, so it is acknowledged this time.
    again = await acked.requests.transition(req.id, approve(req))
    assert again.request.state == State.APPROVED
    victim = primary_of(cluster, acked._redis, req.id)
    assert await kill_and_rejoin(cluster, acked, req.id, victim) == State.APPROVED


async def test_without_acks_a_stalled_replica_loses_an_acknowledged_approve(
    cluster: LocalCluster, policy: Policy
) -> None:
    """The window HITL_REPLICA_ACKS closes: acknowledged, then gone with the primary."""
    cluster.wait_ok(FAILOVER_S)
    async with runtime(cluster, policy, acks=0) as rt:
        req = await created(rt, policy, 13)
        primary = primary_of(cluster, rt._redis, req.id)
        (replica,) = cluster.replicas_of(primary)
        caught_up(primary, replica)  # the create is on the replica: only the approve is not
        replica.pause()
        try:
            # What the primary already sent sits in the stalled replica's socket and would
            # still be read on waking: close the link, so the approve is on the primary only.
            with primary.client() as c:
                c.execute_command("CLIENT", "KILL", "TYPE", "replica")
            moved = await rt.requests.transition(req.id, approve(req))
            assert moved.request.state == State.APPROVED  # acknowledged to the person
            cluster.kill(primary)
        finally:
            replica.resume()
        assert await state_after_failover(rt, req.id) == State.PENDING_REVIEW
        cluster.wait_failover(FAILOVER_S)
        cluster.restart(primary)
