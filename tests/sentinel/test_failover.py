"""kill -9 the primary behind Sentinel under load: callers get 503 + Retry-After (API)
or a STORE_DOWN error (store), never 500, fast; the sentinels promote a replica and
traffic recovers with nobody acting; the killed node, started again, rejoins as a
replica. Prints the figures, as tests/cluster/test_failover.py does for Cluster.

Replication is asynchronous, so writes the primary acknowledged in its last
milliseconds can be lost: lost and double executions are measured and reported,
not asserted to be zero (HITL_REPLICA_ACKS is what narrows that window).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import Awaitable, Callable

import httpx
import pytest
from redis.asyncio import Redis

from bot.api import create_app
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db.failures import STORE_DOWN
from bot.errors import NotFound
from bot.store import audit
from bot.store.requests import RequestStore
from tests.api.live import TOKEN, make_runtime
from tests.cluster.test_failover import Load, T
from tests.support.keys import serve_signer
from tests.support.localsentinel import LocalSentinel
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(300)
CLIENTS = 8
RECOVERY_DEADLINE_S = 60.0  # the sentinels need ~2 s (down-after 1 s, then a vote)
REJOIN_DEADLINE_S = 120.0  # a sentinel looks at a returned node every 10 s, then it syncs


class SentinelLoad(Load):
    """The cluster test's load, with store calls retried on what the API maps to 503."""

    slowest_store_failure_s = 0.0

    async def store_call(self, call: Callable[[], Awaitable[T]]) -> T:
        while True:
            started = time.monotonic()
            try:
                return await call()
            except STORE_DOWN:
                self.statuses[-1] += 1  # a Slack click would be answered "try again"
                took = time.monotonic() - started
                self.slowest_store_failure_s = max(self.slowest_store_failure_s, took)
                await asyncio.sleep(0.05)


async def _writes(store: RequestStore, policy: Policy) -> bool:
    try:
        await store.create(policy, tool="refund", args={"amount": 1}, requester="probe")
    except STORE_DOWN:
        return False
    return True


async def test_kill_the_primary_under_load(
    sentinel: LocalSentinel, client: Redis, policy: Policy
) -> None:
    sentinel.wait_settled()
    # Signed as serve signs: the API's runtime refuses to run an unsigned approval.
    store = RequestStore(client, signer=serve_signer())
    # A waiter from before the kill: its wait hub reader must find the new primary.
    waited = (await store.create(policy, tool="refund", args={"amount": 7}, requester="U1")).request
    await client.execute_command("WAIT", 2, 10_000)  # on both replicas before the kill
    waiting = asyncio.create_task(store.wait(waited.id, timeout_s=3600))

    app = create_app(make_runtime(client, policy))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=auth) as api:
        load = SentinelLoad(api, store)
        clients = [asyncio.create_task(load.client(n)) for n in range(CLIENTS)]
        await eventually(lambda: load.done >= 50, what="load before the kill", timeout_s=60)
        victim = sentinel.primary()
        before = load.done
        sentinel.kill(victim)
        killed_at = time.monotonic()
        await eventually(
            lambda: _writes(RequestStore(client), policy),
            what="a write after the failover",
            timeout_s=RECOVERY_DEADLINE_S,
            interval_s=0.1,
        )
        recovered_s = time.monotonic() - killed_at
        after = load.done
        # The figures printed below say how far traffic got if it did not recover.
        with contextlib.suppress(AssertionError):
            await eventually(
                lambda: load.done >= after + 50,
                what="50 more requests done",
                timeout_s=RECOVERY_DEADLINE_S,
            )
        load.stop.set()
        await asyncio.gather(*clients)

    approve = Decision(event=Event.APPROVE, actor="U2", payload_hash=waited.payload_hash)
    await load.store_call(lambda: store.transition(waited.id, approve))
    woken = await asyncio.wait_for(waiting, RECOVERY_DEADLINE_S)

    sentinel.restart(victim)
    rejoin_started = time.monotonic()
    primary = sentinel.wait_settled(REJOIN_DEADLINE_S)
    rejoined_s = time.monotonic() - rejoin_started

    # Read as a person's click would be: a connection the rejoin closed (the sentinels
    # send CLIENT KILL to an instance they reconfigure) is "try again", not a loss.
    lost, double, broken = 0, 0, 0
    for rid, acked in load.acked.items():
        try:
            now = await load.store_call(functools.partial(store.get, rid))
        except NotFound:
            lost += 1
            continue
        order = [State.PENDING_REVIEW, State.APPROVED, State.EXECUTING, State.COMPLETED]
        lost += order.index(now.state) < order.index(acked)
        lines = await load.store_call(functools.partial(audit.lines, client, rid))
        double += [json.loads(x)["event"] for x in lines].count("claim") > 1
        verdict = await load.store_call(functools.partial(audit.verify_request, client, rid))
        broken += verdict is not None
    figures = {
        "requests": len(load.acked),
        "completed": load.done,
        "during_failover": load.done - before,
        "lost": lost,
        "double_executions": double,
        "time_to_recover_s": round(recovered_s, 1),
        "slowest_503_s": round(load.slowest_failure_s, 2),
        "slowest_store_failure_s": round(load.slowest_store_failure_s, 2),
        "time_to_rejoin_s": round(rejoined_s, 1),
        "http": dict(sorted(load.statuses.items())),
    }
    print("\nSENTINEL FAILOVER", json.dumps(figures))
    assert load.statuses[500] == 0, figures
    assert load.no_retry_after == 0, figures
    # Fail fast: a caller learns to retry in about a connect timeout (5 s), not a hang
    # until the failover ends; the margin is for a loaded machine.
    assert load.slowest_failure_s < 15 and load.slowest_store_failure_s < 15, figures
    assert load.done >= after + 50, figures  # traffic recovered, nobody acting
    assert load.statuses[200] > 0, figures  # results were accepted, not refused (409)
    assert woken.state == State.APPROVED
    assert primary is not victim and victim.role() == "slave", figures
    assert broken == 0, figures
    assert await _writes(store, policy)  # and the client still writes after the rejoin
