"""kill -9 of the embedded Valkey mid-run: every acknowledged transition survives."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db.valkey.embedded import ensure_server
from bot.store import audit
from bot.store.requests import RequestStore
from tests.support.poll import eventually

STEPS = [Event.APPROVE, Event.CLAIM, Event.SUCCEED]


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hk"))
    try:
        yield path
    finally:
        with contextlib.suppress(Exception):
            ensure_server(path).kill()
        shutil.rmtree(path, ignore_errors=True)


async def test_acknowledged_transitions_survive_kill_9(data_dir: Path, policy: Policy) -> None:
    server = ensure_server(data_dir)
    clock = FakeClock()
    client = Redis.from_url(server.url, decode_responses=True)
    store = RequestStore(client, clock=clock)
    acked: dict[str, tuple[int, State]] = {}  # request id -> (version, state) last acknowledged
    killed = asyncio.Event()

    async def drive(worker: int) -> None:
        n = 0
        while not killed.is_set():
            n += 1
            try:
                made = await store.create(
                    policy,
                    tool="refund",
                    args={"w": worker, "n": n, "amount": 1},
                    requester="UAGENT",
                )
                req = made.request
                acked[req.id] = (req.version, req.state)
                for ev in STEPS:
                    d = Decision(
                        event=ev,
                        actor="UANA" if ev == Event.APPROVE else "system",
                        payload_hash=req.payload_hash,
                    )
                    req = (await store.transition(req.id, d)).request
                    acked[req.id] = (req.version, req.state)
            except (RedisError, OSError):
                return  # the server died under this call: it was never acknowledged

    drivers = [asyncio.create_task(drive(w)) for w in range(8)]
    await eventually(lambda: len(acked) >= 150, what="150 acknowledged transitions")
    server.kill()  # SIGKILL, mid-flight
    killed.set()
    await asyncio.gather(*drivers)
    await client.aclose()

    restarted = ensure_server(data_dir)
    assert restarted.owned
    client = Redis.from_url(restarted.url, decode_responses=True)
    store = RequestStore(client, clock=clock)
    try:
        for rid, (version, state) in acked.items():
            now = await store.get(rid)
            # Nothing acknowledged is lost; at most an unacknowledged step went through.
            assert now.version >= version, (rid, now.version, version)
            if now.version == version:
                assert now.state == state
            assert await audit.verify_request(client, rid) is None, rid
        completed = sum(1 for v, s in acked.values() if s == State.COMPLETED)
        assert completed > 0
    finally:
        await client.aclose()
        restarted.stop()
