"""The free path: a `review: none` call created already claimed, in one round trip.

What it leaves behind must be what create then claim leave: the same request, the
same audit trail (so `audit verify` and the card read the same thing), the same
events, wake entries and deadlines. Each test runs both ways side by side.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.machine import apply
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import InvalidTransition
from bot.store import audit, keys
from bot.store.requests import RequestStore
from tests.store.lua_vs_core import comparable, expected_audit

VOLATILE = {"id", "audit_head", "idem"}  # differ between two requests by construction
TOKEN = "worker-1-token"  # the claim token both ways claim with: their fences then agree


async def trail(redis: Redis, rid: str) -> list[tuple[Any, ...]]:
    return [
        (e.at, e.actor, e.kind, e.event, e.from_state, e.to_state, e.reason_code, e.version)
        for e in await audit.entries(redis, rid)
    ]


async def events(redis: Redis, rid: str) -> list[tuple[str, str, str, str]]:
    got = cast(list[tuple[str, dict[str, str]]], await redis.xrange(keys.request_keys(rid)[6]))
    return [(f["kind"], f["event"], f["state"], f["version"]) for _, f in got if f.get("id") == rid]


async def indexes(redis: Redis, rid: str) -> dict[str, Any]:
    k = keys.request_keys(rid)
    due = cast(list[tuple[str, float]], await redis.zrange(k[2], 0, -1, withscores=True))
    wake = cast(list[tuple[str, dict[str, str]]], await redis.xrange(k[5]))
    return {
        "due": [(m.split("|")[1], s) for m, s in due if m.startswith(f"req:{rid}|")],
        "pending": await redis.zscore(k[3], rid),
        "all": await redis.zscore(k[4], rid),
        "wake": [(i, f) for i, f in wake],
        "wake_ttl": await redis.ttl(k[5]) > 0,
    }


async def stored(redis: Redis, rid: str) -> dict[str, str]:
    h = cast(dict[str, str], await redis.hgetall(keys.request(rid)))
    return {k: v for k, v in h.items() if k not in VOLATILE}


async def test_claimed_create_leaves_what_create_then_claim_leaves(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    call = {"tool": "move_claw", "args": {"dir": "left"}, "requester": "U1", "run_id": "r1"}
    old = (await store.create(policy, **call, idempotency_key="a")).request  # type: ignore[arg-type]
    assert old.state == State.APPROVED
    claim = Decision(event=Event.CLAIM, actor="worker-1", claim_token=TOKEN)
    await store.transition(old.id, claim)
    made = await store.create(
        policy, **call, idempotency_key="b", claim_as="worker-1", claim_token=TOKEN
    )  # type: ignore[arg-type]

    assert made.created and made.claimed and made.request.state == State.EXECUTING
    assert made.request.resolution is not None
    assert made.request.resolution.reason_code == "no_review"
    assert await trail(redis, made.request.id) == await trail(redis, old.id)
    assert [e[5] for e in await trail(redis, old.id)] == ["pending_review", "approved", "executing"]
    assert await events(redis, made.request.id) == await events(redis, old.id)
    assert await indexes(redis, made.request.id) == await indexes(redis, old.id)
    assert await stored(redis, made.request.id) == await stored(redis, old.id)
    assert await audit.verify_request(redis, made.request.id) is None

    # and the outcome goes on as from any claim
    done = await store.transition(made.request.id, Decision(event=Event.SUCCEED, detail="ok"))
    assert done.request.state == State.COMPLETED
    assert await audit.verify_request(redis, made.request.id) is None


async def test_claim_as_leaves_a_reviewed_call_pending(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    made = await store.create(
        policy, tool="refund", args={"amount": 5}, requester="U1", claim_as="worker-1"
    )
    assert not made.claimed and made.request.state == State.PENDING_REVIEW
    assert [e[5] for e in await trail(redis, made.request.id)] == ["pending_review"]


async def test_claim_as_on_an_existing_request_claims_nothing(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """A retried call finds its request again; it is never claimed a second time."""
    call = {"tool": "move_claw", "args": {}, "requester": "U1", "idempotency_key": "k"}
    first = await store.create(policy, **call, claim_as="worker-1")  # type: ignore[arg-type]
    again = await store.create(policy, **call, claim_as="worker-2")  # type: ignore[arg-type]
    assert first.claimed and not again.created and not again.claimed
    assert again.request.version == first.request.version
    assert [e[1] for e in await trail(redis, first.request.id)][-1] == "worker-1"
    with pytest.raises(InvalidTransition):
        await store.transition(first.request.id, Decision(event=Event.CLAIM, actor="worker-2"))


async def test_claimed_create_matches_the_pure_machine(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock
) -> None:
    """What Lua claimed is what `bot.core.machine` makes of the approved request."""
    call = {"tool": "move_claw", "args": {"dir": "up"}, "requester": "U1"}
    approved = (await store.create(policy, **call)).request  # type: ignore[arg-type]
    claim = Decision(event=Event.CLAIM, actor="worker-1", claim_token=TOKEN)
    step = apply(approved, claim, clock())
    await redis.flushdb()
    made = await store.create(policy, **call, claim_as="worker-1", claim_token=TOKEN)  # type: ignore[arg-type]
    assert comparable(made.request) == comparable(
        step.request.model_copy(update={"id": made.request.id})
    )
    got = [
        (e.kind, e.event, e.from_state, e.to_state, e.reason_code)
        for e in await audit.entries(redis, made.request.id)
    ][2:]
    assert got == expected_audit(approved, claim, step)


@pytest.mark.parametrize(
    ("tool", "claim_as", "state"),
    [
        ("refund", None, State.PENDING_REVIEW),
        ("move_claw", None, State.APPROVED),
        ("move_claw", "worker-1", State.EXECUTING),
    ],
)
async def test_the_request_create_returns_is_the_one_stored(
    store: RequestStore, policy: Policy, tool: str, claim_as: str | None, state: State
) -> None:
    """The script answers a create with the fields it chose; the caller's copy must be
    exactly what a read gives, or a card, a waiter or the SDK would act on a stale copy."""
    args = {"amount": 5, "note": "<!channel> ✓", "nested": {"b": [1, 2.5, None], "a": True}}
    made = await store.create(
        policy, tool=tool, args=args, requester="U1", run_id="r1", claim_as=claim_as
    )
    assert made.created and made.request.state == state
    assert made.request == await store.get(made.request.id)
    again = await store.create(policy, tool=tool, args=args, requester="U1", run_id="r1")
    assert again.request == await store.get(again.request.id)


async def test_advance_moves_as_transition_does_and_refuses_alike(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """`advance` is `transition` without the read back: same effect, same refusals."""
    call = {"tool": "move_claw", "args": {"dir": "up"}, "requester": "U1"}
    a = (await store.create(policy, **call, claim_as="w", claim_token=TOKEN)).request  # type: ignore[arg-type]
    b = (await store.create(policy, **call, claim_as="w", claim_token=TOKEN)).request  # type: ignore[arg-type]
    assert await store.advance(a.id, Decision(event=Event.SUCCEED, detail="done")) == (
        State.COMPLETED
    )
    moved = await store.transition(b.id, Decision(event=Event.SUCCEED, detail="done"))
    assert await stored(redis, a.id) == await stored(redis, b.id)
    assert await trail(redis, a.id) == await trail(redis, b.id)
    assert (await store.get(a.id)).state == moved.request.state == State.COMPLETED
    with pytest.raises(InvalidTransition) as lean:
        await store.advance(a.id, Decision(event=Event.SUCCEED, detail="again"))
    with pytest.raises(InvalidTransition) as full:
        await store.transition(b.id, Decision(event=Event.SUCCEED, detail="again"))
    assert str(lean.value) == str(full.value)
