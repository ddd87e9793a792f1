"""A caller who stops waiting while the store already holds its request, but before the
create's reply has reached it: the request must not stay in review for nobody."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.core.models import ActionRequest
from bot.core.states import State
from bot.sdk import Gate
from bot.store.requests import RequestStore
from tests.api.live import AGENT_TOKEN, LiveServer
from tests.support.keys import serve_signer


class HeldCreates(httpx.AsyncBaseTransport):
    """The network between the agent and the API: the reply to a create is held, after
    the API has stored the request, until the test lets it through. Thread-safe: a sync
    caller's gate sends from a loop of its own."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.held = threading.Event()
        self.release = threading.Event()
        self.cancelled = threading.Event()  # the create itself was cancelled while held

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and request.url.path == "/v1/approvals":
            await response.aread()
            self.held.set()
            try:
                while not self.release.is_set():
                    await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _held_request(net: HeldCreates, store: RequestStore, order: str) -> ActionRequest:
    assert await asyncio.to_thread(net.held.wait, 10), "the create never reached the API"
    (stored,) = [r for r in await store.list_pending() if r.args == {"order": order}]
    return stored


async def _assert_withdrawn(store: RequestStore, rid: str) -> None:
    req = await store.get(rid)
    assert req.state == State.CANCELLED
    assert req.resolution is not None
    assert (req.resolution.reason_code, req.resolution.actor) == ("caller_gone", "agent-7")


@pytest.fixture
def net() -> HeldCreates:
    return HeldCreates()


@pytest.fixture
async def gate(live: LiveServer, net: HeldCreates) -> Gate:
    return Gate(api_url=live.url, api_token=AGENT_TOKEN, requester="agent-7", transport=net)


@pytest.fixture
def store(redis: Redis) -> RequestStore:
    return RequestStore(redis, clock=wall_ms, signer=serve_signer())


async def test_an_async_caller_cancelled_before_the_create_answers_withdraws_it(
    gate: Gate, net: HeldCreates, store: RequestStore
) -> None:
    order = "GONE-1"  # the session's API server serves other tests' requests too
    try:
        call = asyncio.create_task(gate.request_approval("refund", {"order": order}))
        stored = await _held_request(net, store, order)

        call.cancel()  # the caller's framework gives up on the tool call
        net.release.set()
        with pytest.raises(asyncio.CancelledError):
            await call
        await _assert_withdrawn(store, stored.id)
    finally:
        net.release.set()
        await gate.aclose()


async def test_a_gate_closed_before_a_sync_callers_create_answers_withdraws_it(
    gate: Gate, net: HeldCreates, store: RequestStore
) -> None:
    """close() used to cancel every task on the gate's loop at once, the create the call
    was finishing included, so the request stayed in review."""
    order = "GONE-2"
    got: list[object] = []

    def waits() -> None:
        try:
            got.append(gate.run_sync(gate.request_approval("refund", {"order": order})))
        except BaseException as exc:  # what the caller's thread sees
            got.append(exc)

    caller = threading.Thread(target=waits, daemon=True)
    caller.start()
    try:
        stored = await _held_request(net, store, order)
        closing = asyncio.create_task(asyncio.to_thread(gate.close))
        # Before the fix the close cancelled the held create at once; with it, the create
        # is left to finish, so this wait ends at its deadline and the reply goes through.
        await asyncio.to_thread(net.cancelled.wait, 0.5)
        net.release.set()
        await asyncio.wait_for(closing, 30)
        await asyncio.to_thread(caller.join, 10)

        assert len(got) == 1 and isinstance(got[0], RuntimeError), got
        await _assert_withdrawn(store, stored.id)
    finally:
        net.release.set()
        await gate.aclose()
