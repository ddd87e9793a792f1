"""What a waiting request holds in Redis: no empty field, no empty level list, one index
entry less."""

from __future__ import annotations

import json
from typing import cast

from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store import audit, keys
from bot.store.requests import RequestStore
from tests.support.decisions import approve


async def stored(redis: Redis, rid: str) -> dict[str, str]:
    return cast(dict[str, str], await redis.hgetall(keys.request(rid)))


async def terms_of(redis: Redis, rid: str, h: dict[str, str]) -> str:
    return cast(str, await redis.hget(keys.terms(keys.shard_of(rid)), h["terms"]))


async def indexed(redis: Redis, rid: str) -> tuple[bool, bool]:
    """(in `pending`, in `all`)"""
    k = keys.request_keys(rid)
    return await redis.zscore(k[3], rid) is not None, await redis.zscore(k[4], rid) is not None


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
