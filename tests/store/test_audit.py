"""The audit trail as stored: a long real history verifies whole, and a late edit is found."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store import audit, keys
from bot.store.requests import RequestStore


async def _long_history(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    """Five entries: create, two escalations (two moves each)."""
    req = (await store.create(policy, tool="refund", args={"n": 1}, requester="U1")).request
    for _ in range(2):
        clock.advance(10 * 60_000)
        current = await store.get(req.id)
        await store.transition(req.id, Decision(event=Event.TIMEOUT, fence=current.version))
    return req.id


async def test_a_long_untouched_history_verifies(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    rid = await _long_history(store, policy, clock)
    assert len(await audit.lines(redis, rid)) == 5
    assert await audit.verify_request(redis, rid) is None


async def test_an_edit_to_the_fifth_entry_is_found(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    rid = await _long_history(store, policy, clock)
    last = await redis.lindex(keys.audit(rid), 4) or ""
    await redis.lset(keys.audit(rid), 4, last.replace('"actor":"', '"actor":"X'))
    broken = await audit.verify_request(redis, rid)
    assert broken is not None and broken.seq == 5
    found = [f async for f in audit.verify_all(store)]
    assert [(f.request_id, f.seq) for f in found] == [(rid, 5)]
