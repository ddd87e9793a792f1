"""Races on a real server: many clients, separate connections, one winner."""

from __future__ import annotations

import asyncio
from collections import Counter

from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import AlreadyResolved
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.clients import open_client

USERS = [f"U{i:02d}" for i in range(20)]


async def _storm(redis_url: str, clock: FakeClock, rid: str, phash: str) -> Counter[str]:
    """200 approve attempts by 20 users, each attempt on its own connection."""

    async def attempt(user: str) -> str:
        client = await open_client(redis_url, single_connection_client=True)
        try:
            moved = await RequestStore(client, clock=clock).transition(
                rid, Decision(event=Event.APPROVE, actor=user, payload_hash=phash)
            )
            return "repeat" if moved.repeat else f"won:{moved.request.state}"
        except AlreadyResolved as exc:
            return f"lost:{exc.by}"
        finally:
            await client.aclose()

    results = await asyncio.gather(*(attempt(USERS[i % 20]) for i in range(200)))
    return Counter(r.split(":")[0] for r in results)


async def test_two_hundred_concurrent_approvals_one_winner(
    store: RequestStore, policy: Policy, redis: Redis, redis_url: str, clock: FakeClock
) -> None:
    req = (await store.create(policy, tool="refund", args={"amount": 7}, requester="UX")).request
    tally = await _storm(redis_url, clock, req.id, req.payload_hash)
    final = await store.get(req.id)
    assert tally["won"] == 1, tally
    assert final.state == State.APPROVED and final.version == 2
    winner = final.resolution.actor if final.resolution else None
    # Everyone else was told who won; only the winner's own repeats came back as repeats.
    assert tally["lost"] + tally["repeat"] == 199
    assert tally["repeat"] <= 9  # the winner has 10 attempts in the storm, one of which won
    trail = await audit.entries(redis, req.id)
    decisions = [e for e in trail if e.kind == "transition" and e.event == "approve"]
    assert len(decisions) == 1 and decisions[0].actor == winner
    assert await audit.verify_request(redis, req.id) is None


async def test_quorum_of_two_under_a_storm_records_exactly_two(
    store: RequestStore, policy: Policy, redis: Redis, redis_url: str, clock: FakeClock
) -> None:
    req = (await store.create(policy, tool="deploy", args={"v": 2}, requester="UX")).request
    tally = await _storm(redis_url, clock, req.id, req.payload_hash)
    final = await store.get(req.id)
    assert final.state == State.APPROVED
    assert len({a.actor for a in final.approvals}) == 2 == len(final.approvals)
    assert tally["won"] == 2, tally
    moves = [e for e in await audit.entries(redis, req.id) if e.kind == "transition"]
    assert [e.to_state for e in moves] == ["pending_review", "pending_review", "approved"]


async def test_claim_race_executes_once(
    store: RequestStore, policy: Policy, redis_url: str, clock: FakeClock
) -> None:
    req = (await store.create(policy, tool="move_claw", args={}, requester="U1")).request

    async def claim(n: int) -> bool:
        client = await open_client(redis_url, single_connection_client=True)
        try:
            await RequestStore(client, clock=clock).transition(
                req.id, Decision(event=Event.CLAIM, actor=f"w{n}")
            )
            return True
        except Exception:
            return False
        finally:
            await client.aclose()

    wins = await asyncio.gather(*(claim(n) for n in range(50)))
    assert sum(wins) == 1
