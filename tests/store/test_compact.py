"""What a waiting request holds in Redis: no empty field, no empty level list, one index
entry less; and a request stored in the older, fuller form reads and moves the same."""

from __future__ import annotations

import json
from typing import cast

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import AlreadyResolved
from bot.store import audit, keys
from bot.store.codec import OPTIONAL, to_hash
from bot.store.requests import RequestStore


async def stored(redis: Redis, rid: str) -> dict[str, str]:
    return cast(dict[str, str], await redis.hgetall(keys.request(rid)))


async def terms_of(redis: Redis, rid: str, h: dict[str, str]) -> str:
    return cast(str, await redis.hget(keys.terms(keys.shard_of(rid)), h["terms"]))


async def indexed(redis: Redis, rid: str) -> tuple[bool, bool]:
    """(in `pending`, in `all`)"""
    k = keys.request_keys(rid)
    return await redis.zscore(k[3], rid) is not None, await redis.zscore(k[4], rid) is not None


def approve(req: ActionRequest, actor: str) -> Decision:
    return Decision(event=Event.APPROVE, actor=actor, payload_hash=req.payload_hash)


async def test_a_waiting_request_stores_no_empty_field_and_gains_them_as_it_moves(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 50}, requester="U1")).request
    h = await stored(redis, req.id)
    assert "" not in h.values(), [k for k, v in h.items() if not v]
    assert not {"res_actor", "detail", "idem", "obo", "original_hash"} & h.keys()
    levels = json.loads(json.loads(await terms_of(redis, req.id, h))["levels"])
    assert levels and all(v not in ([], None) for lv in levels for v in lv.values())
    assert await indexed(redis, req.id) == (True, False)
    assert await store.get(req.id) == req

    moved = (await store.transition(req.id, approve(req, "UBOSS"))).request
    h = await stored(redis, req.id)
    assert h["res_actor"] == "UBOSS" and h["res_event"] == "approve"
    assert "res_text" not in h and "" not in h.values()  # an approval gives no reason
    assert await indexed(redis, req.id) == (False, True)
    assert await store.get(req.id) == moved

    await store.transition(req.id, Decision(event=Event.CLAIM, actor="w1"))
    done = (await store.transition(req.id, Decision(event=Event.SUCCEED, detail="ok"))).request
    h = await stored(redis, req.id)
    assert "expires_at" not in h and h["detail"] == "ok"  # a final request has no deadline
    assert done.expires_at is None and await store.get(req.id) == done
    assert await audit.verify_request(redis, req.id) is None


async def test_ids_between_finds_requests_in_review_and_out_of_it_oldest_first(
    store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    made = []
    for i in range(4):
        clock.advance(1000)
        args = {"amount": i + 1}
        made.append((await store.create(policy, tool="refund", args=args, requester="U1")).request)
    free = (await store.create(policy, tool="move_claw", args={}, requester="U1")).request
    await store.transition(made[1].id, approve(made[1], "UBOSS"))
    ids = [r.id for r in made] + [free.id]
    assert await store.ids_between() == ids
    assert await store.ids_between(made[1].created_at, made[2].created_at) == ids[1:3]


def legacy(req: ActionRequest) -> dict[str, str]:
    """The hash as stored before empty fields were left out: every field, chains in full."""
    h = {k: "" for k in OPTIONAL} | to_hash(req)
    h["levels"] = json.dumps([lv.model_dump() for lv in req.levels], separators=(",", ":"))
    return h


@pytest.mark.parametrize("outcome", ["approve", "reject", "timeout"])
async def test_a_request_stored_in_the_older_form_reads_and_moves_the_same(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock, outcome: str
) -> None:
    """Requests written by the previous release keep working after an upgrade."""
    req = (await store.create(policy, tool="refund", args={"amount": 9}, requester="U1")).request
    full = legacy(await store.get(req.id))
    assert "" in full.values() and '"users":[]' in full["levels"]
    await redis.hset(keys.request(req.id), mapping=full)  # type: ignore[misc]
    await redis.hdel(keys.request(req.id), "terms")  # held inline before, not by reference
    await redis.zadd(keys.request_keys(req.id)[4], {req.id: req.created_at})
    assert await store.get(req.id) == req
    assert await store.ids_between() == [req.id]

    if outcome == "approve":
        moved = (await store.transition(req.id, approve(req, "UBOSS"))).request
        assert moved.state == State.APPROVED
        assert (await store.transition(req.id, approve(req, "UBOSS"))).repeat
        with pytest.raises(AlreadyResolved) as err:
            await store.transition(
                req.id,
                Decision(
                    event=Event.REJECT,
                    actor="UOPS",
                    payload_hash=req.payload_hash,
                    reason_code="too_risky",
                ),
            )
        assert err.value.by == "UBOSS"
    elif outcome == "reject":
        rejected = Decision(
            event=Event.REJECT,
            actor="UBOSS",
            payload_hash=req.payload_hash,
            reason_code="too_risky",
            text="no",
        )
        moved = (await store.transition(req.id, rejected)).request
        assert moved.state == State.CANCELLED and moved.expires_at is None
    else:
        assert req.expires_at is not None
        clock.advance(req.expires_at - clock.now)
        moved = (await store.transition(req.id, Decision(event=Event.TIMEOUT))).request
        assert moved.state in (State.PENDING_REVIEW, State.AUTO_REJECTED)
    got = await store.get(req.id)  # a refusal since moved the audit head only
    assert got.model_copy(update={"audit_head": moved.audit_head}) == moved
    assert await store.ids_between() == [req.id]
    assert await audit.verify_request(redis, req.id) is None
