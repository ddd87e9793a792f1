"""What the bot does differently on Redis/Valkey Cluster, in one place.

Every key carries one of `slots.SHARDS` hash tags, so each script, MULTI and
multi-key read touches one slot. What a cluster still refuses, and the bot
therefore avoids there: a command over keys in several slots (an XREADGROUP
over every shard's stream), and EVALSHA inside a pipeline.

During a failover the slots of the lost primary answer with errors until its
replica takes over (a few seconds): `TRANSIENT` names those errors so callers
can answer "try again" (HTTP 503 with Retry-After) and startup steps can retry.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import redis.asyncio
import redis.asyncio.sentinel
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError as _AskError,
)
from redis.exceptions import (
    ClusterError,
    ConnectionError,
    ReadOnlyError,
    RedisClusterException,
    TimeoutError,
    TryAgainError,
)

if TYPE_CHECKING:
    from bot.db.replicas import ReplicaAcks

log = logging.getLogger(__name__)
T = TypeVar("T")

# A lost node, a slot with no primary yet, a slot moving, a retry budget used up
# chasing MOVED/ASK redirects: all pass once the cluster settles.
TRANSIENT: tuple[type[Exception], ...] = (
    ConnectionError,
    TimeoutError,
    ClusterError,  # ClusterDownError, MasterDownError
    TryAgainError,
    _AskError,  # MovedError too
    RedisClusterException,  # SlotNotCoveredError, "Redis Cluster cannot be connected"
    ReadOnlyError,  # Sentinel: a connection still on the old primary, now a replica
)
STARTUP_RETRY_S = 120.0  # longer than any failover the cluster's node timeout allows


def is_cluster(client: object) -> bool:
    """True for a cluster client (`redis.asyncio.RedisCluster`)."""
    return isinstance(client, redis.asyncio.RedisCluster)


def fails_over(client: object) -> bool:
    """True where a primary's loss is passed over by the store itself: a cluster, or a
    client that finds its primary through Sentinel."""
    if is_cluster(client):
        return True
    pool = getattr(client, "connection_pool", None)
    return isinstance(pool, redis.asyncio.sentinel.SentinelConnectionPool)


async def is_cluster_node(client: redis.asyncio.Redis) -> bool:
    """Whether the server behind a plain client runs in cluster mode."""
    info = await client.info("cluster")
    return str(info.get("cluster_enabled", "0")) == "1"


async def retry_startup(
    step: Callable[[], Awaitable[T]],
    *,
    what: str,
    cluster: bool,
    within_s: float = STARTUP_RETRY_S,
) -> T:
    """Run a startup step; where the store fails over (`cluster`: a cluster or Sentinel,
    `fails_over`), retry transient store errors for `within_s`.

    A consumer group created while its slot fails over must not end the process;
    past `within_s` the last error is raised (fail closed: the supervisor sees it).
    On a single server there is no failover to wait out: the error goes straight to
    the task's supervisor, which retries with backoff and reports the task on
    /healthz meanwhile (a server that is down must show, not hide in a retry loop).
    """
    if not cluster:
        return await step()
    deadline = time.monotonic() + within_s
    pause = 0.1
    while True:
        try:
            return await step()
        except TRANSIENT as exc:
            if time.monotonic() + pause > deadline:
                raise
            log.warning("%s failed (%s); retrying in %.1f s", what, exc, pause)
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)


async def run_many(
    client: redis.asyncio.Redis,
    script: AsyncScript,
    calls: list[tuple[list[str], list[str | int]]],
    in_flight: asyncio.Semaphore,
    acks: ReplicaAcks | None = None,
) -> list[Any]:
    """One script over many (KEYS, ARGV), in one pipeline. A cluster pipeline refuses
    EVALSHA: there, one call each, at most `in_flight` at once for the whole store (a
    cluster client fails, MaxConnectionsError, rather than queue once a node's pool is
    used up, and waiters hold connections too). With replica acks (`acks.n` > 0) each
    call waits for its replicas too, one pipeline each, a timeout logged (not raised)."""
    if is_cluster(client) or (acks is not None and acks.n > 0):

        async def one(k: list[str], a: list[str | int]) -> Any:
            async with in_flight:
                if acks is not None:
                    return await acks.script(script, keys=k, args=a, strict=False)
                return await script(keys=k, args=a)

        return list(await asyncio.gather(*(one(k, a) for k, a in calls)))
    pipe = client.pipeline(transaction=False)
    for k, a in calls:
        await script(keys=k, args=a, client=pipe)
    return await pipe.execute()
