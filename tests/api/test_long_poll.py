"""GET ?wait= over a real socket: it holds, and wakes on the decision within ~100 ms."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from redis.asyncio import Redis

from bot.api import create_app
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store.questions import QuestionStore
from bot.store.requests import RequestStore
from tests.api.conftest import AUTH
from tests.api.live import LiveServer, make_runtime


@pytest.fixture
def store(redis: Redis) -> RequestStore:
    return RequestStore(redis)  # the wall clock, as the server's


@pytest.fixture
def questions(redis: Redis) -> QuestionStore:
    return QuestionStore(redis)


async def test_long_poll_wakes_on_the_decision(live: LiveServer, store: RequestStore) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 1}})).json()
        t0 = time.monotonic()
        poll = asyncio.create_task(c.get(f"/v1/approvals/{made['id']}", params={"wait": 20}))
        await asyncio.sleep(0.3)
        assert not poll.done()  # held open, not answered with the pending request
        decided = time.monotonic()
        await store.transition(  # as the Slack side would
            made["id"],
            Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
        )
        resp = await asyncio.wait_for(poll, 5)
        woke = time.monotonic()
    assert resp.status_code == 200 and resp.json()["state"] == "approved"
    assert woke - decided < 0.1, f"woke {1000 * (woke - decided):.0f} ms after the decision"
    assert woke - t0 >= 0.3


async def test_long_poll_returns_pending_when_the_wait_ends(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 2}})).json()
        t0 = time.monotonic()
        resp = await c.get(f"/v1/approvals/{made['id']}", params={"wait": 0.4})
    assert resp.json()["state"] == "pending_review"
    assert 0.35 < time.monotonic() - t0 < 2


async def test_many_long_polls_hold_no_threads(live: LiveServer, store: RequestStore) -> None:
    """100 concurrent waiters on one server: all wake; none needs a worker thread."""
    async with httpx.AsyncClient(
        base_url=live.url, headers=AUTH, timeout=30, limits=httpx.Limits(max_connections=200)
    ) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 3}})).json()
        polls = [
            asyncio.create_task(c.get(f"/v1/approvals/{made['id']}", params={"wait": 20}))
            for _ in range(100)
        ]
        await asyncio.sleep(0.5)
        await store.transition(
            made["id"],
            Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
        )
        done = await asyncio.wait_for(asyncio.gather(*polls), 5)
    assert {r.json()["state"] for r in done} == {"approved"}


async def test_question_long_poll_wakes_on_the_answer(
    live: LiveServer, questions: QuestionStore
) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        q = (await c.post("/v1/questions", json={"question": "Which order?"})).json()
        poll = asyncio.create_task(c.get(f"/v1/questions/{q['id']}", params={"wait": 20}))
        await asyncio.sleep(0.2)
        assert not poll.done()
        await questions.answer(q["id"], actor="UKID", answer="A1")
        resp = await asyncio.wait_for(poll, 2)
    body = resp.json()
    assert body["state"] == "answered" and body["answer"] == "A1" and body["answered_by"] == "UKID"


async def _blocked_clients(redis: Redis) -> int:
    return sum("b" in c.get("flags", "") for c in await redis.client_list())


async def test_a_client_that_hangs_up_frees_the_wait(live: LiveServer, redis: Redis) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 4}})).json()
    before = await _blocked_clients(redis)
    poller = httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30)
    poll = asyncio.create_task(poller.get(f"/v1/approvals/{made['id']}", params={"wait": 30}))
    await asyncio.sleep(0.3)
    assert await _blocked_clients(redis) == before + 1  # the server blocks in XREAD
    poll.cancel()
    await poller.aclose()  # the client hangs up
    for _ in range(50):
        if await _blocked_clients(redis) == before:
            break
        await asyncio.sleep(0.02)
    assert await _blocked_clients(redis) == before


async def test_a_wait_longer_than_the_redis_socket_timeout(
    redis_url: str, policy: Policy, store: RequestStore
) -> None:
    """redis-py 8 times a read out after socket_timeout (5 s by default): the long-poll
    must block in shorter steps, not fail with a 503 when the person takes longer."""
    short = Redis.from_url(redis_url, decode_responses=True, socket_timeout=1.0)
    app = create_app(make_runtime(short, policy))
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t", headers=AUTH
        ) as c:
            made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {}})).json()
            poll = asyncio.create_task(c.get(f"/v1/approvals/{made['id']}", params={"wait": 5}))
            await asyncio.sleep(1.5)  # longer than the socket timeout
            await store.transition(
                made["id"],
                Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
            )
            resp = await asyncio.wait_for(poll, 3)
    finally:
        await short.aclose()
    assert resp.status_code == 200 and resp.json()["state"] == "approved"
