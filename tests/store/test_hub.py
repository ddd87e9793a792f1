"""The wait hub: many waiters on a small pool, no missed wake-up, and a Valkey restart.

Waits use deadlines far longer than any test, so a waiter that returns the
decision was woken by it. No latency bounds here: bench/waiters.py measures them.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.models import ActionRequest
from bot.core.policy import Policy
from bot.core.states import State
from bot.db import hub
from bot.db.connection import connect
from bot.db.hub import hub_for
from bot.db.valkey.embedded import ensure_server
from bot.errors import StoreUnavailable
from bot.store import keys
from bot.store.requests import RequestStore
from tests.support.decisions import approve as _approve
from tests.support.poll import eventually

LONG = 3600.0


async def _waiting(client: Redis, count: int) -> None:
    await eventually(
        lambda: hub_for(client).waiting == count, what=f"{count} waiters held", timeout_s=30
    )


async def _made(store: RequestStore, policy: Policy, n: int) -> list[ActionRequest]:
    return [
        (await store.create(policy, tool="refund", args={"n": i}, requester="U1")).request
        for i in range(n)
    ]


async def test_a_new_waiter_is_watched_without_waiting_for_the_current_block(
    store: RequestStore, policy: Policy, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader is blocked on the first request's key when a second waiter comes for
    another key of the same shard; the reader's block is made to last an hour, so only
    the wake-up through the control stream lets the second waiter see its decision."""
    monkeypatch.setattr(hub, "BLOCK_MS", 3_600_000)
    monkeypatch.setattr(hub, "READ_TIMEOUT_S", LONG + 60)
    made = await _made(store, policy, 40)
    by_shard: dict[int, list[ActionRequest]] = {}
    for r in made:
        by_shard.setdefault(keys.shard_of(r.id), []).append(r)
    first, second = next(rs for rs in by_shard.values() if len(rs) >= 2)[:2]
    client = Redis.from_url(redis_url, decode_responses=True)
    waiter = RequestStore(client)
    try:
        held = asyncio.create_task(waiter.wait(first.id, LONG))
        await _waiting(client, 1)
        await eventually(
            client.client_list,
            lambda clients: any("b" in c.get("flags", "") for c in clients),
            what="the shard's reader blocked on the first key",
            timeout_s=30,
        )
        late = asyncio.create_task(waiter.wait(second.id, LONG))
        await _waiting(client, 2)
        await store.transition(second.id, _approve(second))
        async with asyncio.timeout(30):
            got = await late
        assert got.state == State.APPROVED
        assert not held.done()
        held.cancel()  # an abandoned wait frees its waiter at once
        with contextlib.suppress(asyncio.CancelledError):
            await held
        assert hub_for(client).waiting == 0
    finally:
        await hub.close_hub(client)
        await client.aclose()


async def test_hundreds_of_waiters_on_a_pool_of_four(
    store: RequestStore, policy: Policy, redis_url: str
) -> None:
    """300 waiters and a pool capped at 4 connections: the same client still answers
    other commands while they wait, and every waiter gets its decision."""
    client, _ = await connect(
        Settings(redis_url=SecretStr(redis_url), hitl_redis_max_connections=4)
    )
    waiter = RequestStore(client)
    try:
        made = await _made(store, policy, 100)
        waits = [asyncio.create_task(waiter.wait(r.id, LONG)) for r in made for _ in range(3)]
        await _waiting(client, 300)
        assert await client.ping()
        extra = await waiter.create(policy, tool="refund", args={"more": 1}, requester="U2")
        assert extra.created
        for r in made:
            await store.transition(r.id, _approve(r))
        async with asyncio.timeout(60):
            got = await asyncio.gather(*waits)
        assert {r.state for r in got} == {State.APPROVED}
        assert len(client.connection_pool._in_use_connections) == 0
    finally:
        await hub.close_hub(client)
        await client.aclose()


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hh"))
    try:
        yield path
    finally:
        with contextlib.suppress(Exception):
            ensure_server(path).kill()
        shutil.rmtree(path, ignore_errors=True)


async def test_a_waiter_outlives_a_kill_9_of_valkey(data_dir: Path, policy: Policy) -> None:
    """The shard reader reconnects after the server comes back, and the waiter still
    returns the decision made after the restart."""
    server = await asyncio.to_thread(ensure_server, data_dir)
    client = Redis.from_url(server.url, decode_responses=True)
    deciding = Redis.from_url(server.url, decode_responses=True)
    try:
        req = (await _made(RequestStore(deciding), policy, 1))[0]
        waiting = asyncio.create_task(RequestStore(client).wait(req.id, LONG))
        await _waiting(client, 1)
        await deciding.aclose()
        server.kill()
        server = await asyncio.to_thread(ensure_server, data_dir)
        assert server.owned
        deciding = Redis.from_url(server.url, decode_responses=True)
        await RequestStore(deciding).transition(req.id, _approve(req))
        async with asyncio.timeout(30):
            got = await waiting
        assert got.state == State.APPROVED
    finally:
        await hub.close_hub(client)
        await client.aclose()
        await deciding.aclose()
        server.kill()  # through our own handle, so its process is reaped here


async def test_closing_the_hub_fails_a_held_wait_at_once(
    store: RequestStore, policy: Policy, redis_url: str
) -> None:
    """A process shutting down does not leave its waits hanging until their deadline,
    nor pretend nothing changed: they raise StoreUnavailable."""
    req = (await _made(store, policy, 1))[0]
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        waiting = asyncio.create_task(RequestStore(client).wait(req.id, LONG))
        await _waiting(client, 1)
        await hub.close_hub(client)
        with pytest.raises(StoreUnavailable):
            async with asyncio.timeout(30):
                await waiting
    finally:
        await client.aclose()
