"""How many calls one identity may leave waiting: past HITL_MAX_WAITING_PER_IDENTITY a
filing is refused with 429 that names the limit and the setting, nothing is filed, other
identities file on, and a decision makes room (a real server on a socket, real Valkey)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.core.models import Decision
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.errors import TooManyWaiting
from bot.sdk import Gate
from bot.store import keys
from bot.store.pending_count import waiting_of
from bot.store.requests import RequestStore
from tests.api.live import AGENT_TOKEN, TOKEN, LiveServer, live_server
from tests.conftest import QUORUM_POLICY
from tests.support.keys import serve_signer

LIMIT = 3
AGENT = {"Authorization": f"Bearer {AGENT_TOKEN}"}


@pytest.fixture(scope="module")
def bounded(redis_url: str) -> Iterator[LiveServer]:
    with live_server(redis_url, parse_policy(QUORUM_POLICY), max_waiting=LIMIT) as server:
        yield server


def refund(order: int, **extra: object) -> dict[str, object]:
    return {"tool": "refund", "args": {"amount": 5, "order": order}, **extra}


async def test_past_the_bound_a_filing_is_refused_with_429_until_one_is_decided(
    bounded: LiveServer, redis: Redis
) -> None:
    store = RequestStore(redis, clock=wall_ms, signer=serve_signer())  # as the server's
    async with httpx.AsyncClient(base_url=bounded.url, headers=AGENT) as http:
        made = [await http.post("/v1/approvals", json=refund(i)) for i in range(LIMIT - 1)]
        keyed = await http.post("/v1/approvals", json=refund(9, idempotency_key="k-9"))
        assert [r.status_code for r in [*made, keyed]] == [201] * LIMIT

        over = await http.post("/v1/approvals", json=refund(LIMIT))
        assert over.status_code == 429
        body = over.json()
        assert body["error"] == "too_many_waiting"
        assert f"{LIMIT} calls waiting" in body["detail"]
        assert "HITL_MAX_WAITING_PER_IDENTITY" in body["detail"]
        assert await waiting_of(redis, "agent-7") == LIMIT  # nothing was filed

        again = await http.post("/v1/approvals", json=refund(9, idempotency_key="k-9"))
        assert (again.status_code, again.json()["id"]) == (200, keyed.json()["id"])

        other = await http.post(
            "/v1/approvals", json=refund(1), headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert other.status_code == 201  # the bound is per identity

        first = await store.get(made[0].json()["id"])
        decided = Decision(
            event=Event.REJECT,
            actor="UBOSS",
            reason_code="too_risky",
            payload_hash=first.payload_hash,
        )
        await store.transition(first.id, decided)
        room = await http.post("/v1/approvals", json=refund(LIMIT))
        assert room.status_code == 201


async def test_the_sdk_over_http_raises_too_many_waiting(bounded: LiveServer, redis: Redis) -> None:
    async with Gate(api_url=bounded.url, api_token=AGENT_TOKEN, requester="agent-7") as gate:
        for i in range(LIMIT):
            await gate.submit("refund", {"amount": 5, "order": i})
        with pytest.raises(TooManyWaiting, match="HITL_MAX_WAITING_PER_IDENTITY"):
            await gate.submit("refund", {"amount": 5, "order": LIMIT})


async def test_a_store_counted_before_the_bound_existed_is_counted_again(
    redis: Redis, store: RequestStore
) -> None:
    policy = parse_policy(QUORUM_POLICY)
    for i in range(5):
        await store.create(policy, tool="refund", args={"amount": 5, "i": i}, requester="bot-a")
    await store.create(policy, tool="refund", args={"amount": 5}, requester="bot-b")
    for shard in range(keys.SHARDS):  # as an older release left them: no per-identity counts
        await redis.delete(keys.pending_tiers(shard))
    assert (await waiting_of(redis, "bot-a"), await waiting_of(redis, "bot-b")) == (5, 1)
