"""GET ?wait= over a real socket: it holds, and wakes on the decision.

Each poll asks for the longest wait the server allows (60 s), and each test first
sees the server hold it (its `hitl_waiters` gauge counts it): a poll that returns
`approved` was woken by the decision, since the wait could only have ended in
`pending_review`. How fast it
wakes is measured by bench/click_latency.py, not asserted here.
"""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest
from redis.asyncio import Redis

from bot.api import create_app
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.db.hub import hub_for
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from tests.api.conftest import AUTH
from tests.api.live import LiveServer, make_runtime
from tests.support.keys import serve_signer
from tests.support.poll import eventually


@pytest.fixture
def store(redis: Redis) -> RequestStore:
    return RequestStore(redis, signer=serve_signer())  # the wall clock and key, as the server's


@pytest.fixture
def questions(redis: Redis) -> QuestionStore:
    return QuestionStore(redis)


LONGEST = 60  # LiveServer's max_wait_s
HTTP_TIMEOUT = 90  # past the longest wait, so a poll is never cut short by the client


async def _waiters(url: str) -> int:
    """The server's own count of the waits it holds (GET /metrics, `hitl_waiters`)."""
    async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=10) as c:
        text = (await c.get("/metrics")).text
    return int(next(ln for ln in text.splitlines() if ln.startswith("hitl_waiters ")).split()[1])


async def _until_waiting(url: str, count: int) -> None:
    """Until the server holds exactly `count` waits (100 of them take a while to arrive)."""
    await eventually(
        lambda: _waiters(url), lambda n: n == count, what=f"{count} waits held", timeout_s=30
    )


async def test_long_poll_wakes_on_the_decision(
    live: LiveServer, store: RequestStore, redis: Redis
) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=HTTP_TIMEOUT) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 1}})).json()
        before = await _waiters(live.url)
        poll = asyncio.create_task(c.get(f"/v1/approvals/{made['id']}", params={"wait": LONGEST}))
        await _until_waiting(live.url, before + 1)
        assert not poll.done()  # held open, not answered with the pending request
        await store.transition(  # as the Slack side would
            made["id"],
            Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
        )
        resp = await poll
    assert resp.status_code == 200 and resp.json()["state"] == "approved"


async def test_long_poll_returns_pending_when_the_wait_ends(live: LiveServer, redis: Redis) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=HTTP_TIMEOUT) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 2}})).json()
        before = await _waiters(live.url)
        # Long enough to be seen held on a busy machine, where one /metrics read can take
        # longer than a wait of under a second.
        poll = asyncio.create_task(c.get(f"/v1/approvals/{made['id']}", params={"wait": 3}))
        await _until_waiting(live.url, before + 1)  # it held the request rather than answer
        resp = await poll
    assert resp.status_code == 200 and resp.json()["state"] == "pending_review"


async def test_many_long_polls_hold_no_threads(
    live: LiveServer, store: RequestStore, redis: Redis
) -> None:
    """100 concurrent waiters on one server: no thread starts while they are held, and all
    wake on the decision."""
    async with httpx.AsyncClient(
        base_url=live.url,
        headers=AUTH,
        timeout=HTTP_TIMEOUT,
        limits=httpx.Limits(max_connections=200),
    ) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 3}})).json()
        before = await _waiters(live.url)
        threads = set(threading.enumerate())
        polls = [
            asyncio.create_task(c.get(f"/v1/approvals/{made['id']}", params={"wait": LONGEST}))
            for _ in range(100)
        ]
        await _until_waiting(live.url, before + 100)
        # The server runs in this process (a thread of its own): a wait parked on a worker
        # thread would show here as one more thread per held poll.
        started = [t.name for t in threading.enumerate() if t not in threads]
        assert started == [], started
        await store.transition(
            made["id"],
            Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
        )
        done = await asyncio.gather(*polls)
    assert {r.json()["state"] for r in done} == {"approved"}


async def test_question_long_poll_wakes_on_the_answer(
    live: LiveServer, questions: QuestionStore, redis: Redis
) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=HTTP_TIMEOUT) as c:
        q = (await c.post("/v1/questions", json={"question": "Which order?"})).json()
        before = await _waiters(live.url)
        poll = asyncio.create_task(c.get(f"/v1/questions/{q['id']}", params={"wait": LONGEST}))
        await _until_waiting(live.url, before + 1)
        assert not poll.done()
        await questions.answer(q["id"], actor="UKID", answer="A1")
        resp = await poll
    body = resp.json()
    assert body["state"] == "answered" and body["answer"] == "A1" and body["answered_by"] == "UKID"


async def test_a_client_that_hangs_up_frees_the_wait(live: LiveServer, redis: Redis) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        made = (await c.post("/v1/approvals", json={"tool": "refund", "args": {"n": 4}})).json()
    before = await _waiters(live.url)
    poller = httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30)
    poll = asyncio.create_task(poller.get(f"/v1/approvals/{made['id']}", params={"wait": LONGEST}))
    await _until_waiting(live.url, before + 1)
    poll.cancel()
    await poller.aclose()  # the client hangs up
    # Freed by the hang-up: the wait itself would be held for 60 s.
    await _until_waiting(live.url, before)


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
            await eventually(lambda: hub_for(short).waiting == 1, what="the poll held")
            # What this test is about: the person decides later than a read may block.
            await asyncio.sleep(1.5)
            await store.transition(
                made["id"],
                Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
            )
            resp = await poll  # `approved`, not the `pending_review` of a wait that ran out
    finally:
        await short.aclose()
    assert resp.status_code == 200 and resp.json()["state"] == "approved"
