"""A run's call is created only if no correction or stop waits for the run, checked in
the same atomic step as the create: the agent's look at its queue before every tool
call costs no round trip of its own (a free call takes two round trips, not three).
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from redis.asyncio import Redis

from bot.core.policy import Policy
from bot.core.states import State
from bot.store import keys
from bot.store.requests import RequestStore
from bot.store.run.runs import RunStore
from bot.store.run.steering import SteeringStore
from tests.support.clients import CLUSTER

alone = pytest.mark.skipif(CLUSTER, reason="a run's keys and a request's meet on one Redis only")


async def _run(redis: Redis) -> str:
    run = await RunStore(redis).start(agent="a", prompt="go", requester="UASKER")
    return run.id


def _call(run_id: str, n: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "tool": "move_claw",
        "args": {"dir": "left"},
        "requester": "agent",
        "run_id": run_id,
        "idempotency_key": f"{run_id}:c{n}",
        "claim_as": "worker-1",
        **extra,
    }


async def _nothing_left_of(redis: Redis, rid: str) -> None:
    assert await redis.exists(keys.request(rid), keys.audit(rid), keys.wake(rid)) == 0
    got = cast(list[tuple[str, dict[str, str]]], await redis.xrange(keys.request_keys(rid)[6]))
    assert [f for _, f in got if f.get("id") == rid] == []


@alone
async def test_a_queued_correction_creates_nothing_and_stays_queued(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    run_id = await _run(redis)
    steering = SteeringStore(redis)
    await steering.push(run_id, "no, the other claw", actor="UBOSS")

    made = await store.create(policy, **_call(run_id), unless_steered=run_id)

    assert made.steered and not made.created and not made.claimed
    await _nothing_left_of(redis, made.request.id)
    assert await store.ids_between() == []
    assert await steering.pending(run_id) == 1  # the caller takes it, and records that

    s = await steering.pop(run_id)
    assert s is not None and s.text == "no, the other claw"
    again = await store.create(policy, **_call(run_id), unless_steered=run_id)
    assert again.created and again.claimed and again.request.state == State.EXECUTING


@alone
async def test_a_stop_creates_nothing_gated_or_free(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    run_id = await _run(redis)
    await RunStore(redis).update(run_id, stop_requested=True)
    free = await store.create(policy, **_call(run_id, 1), unless_steered=run_id)
    gated = await store.create(
        policy, **_call(run_id, 2, tool="refund", args={"amount": 5}), unless_steered=run_id
    )
    assert free.steered and gated.steered
    for made in (free, gated):
        await _nothing_left_of(redis, made.request.id)
    # without the guard (the caller saw the stop and chose), the call is created regardless
    plain = await store.create(policy, **_call(run_id, 3, claim_as=None))
    assert plain.created and plain.request.state == State.APPROVED


@alone
async def test_another_runs_correction_is_not_this_runs(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    mine, other = await _run(redis), await _run(redis)
    await SteeringStore(redis).push(other, "stop that", actor="UBOSS")
    made = await store.create(policy, **_call(mine), unless_steered=mine)
    assert made.created and made.claimed


async def test_the_guard_is_offered_only_where_the_keys_can_meet(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """On a cluster the run's keys live in another slot: the store says so, and refuses a
    guard it cannot keep rather than create unchecked (the caller then looks first)."""
    assert store.guards_steering is (not CLUSTER)
    if CLUSTER:
        run_id = await _run(redis)
        with pytest.raises(ValueError, match="cluster"):
            await store.create(policy, **_call(run_id), unless_steered=run_id)
        assert await store.ids_between() == []
