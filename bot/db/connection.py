"""Open the one Redis/Valkey connection pool a hitl-bot process uses.

The pool is bounded (HITL_REDIS_MAX_CONNECTIONS) and a command past the bound
waits up to POOL_WAIT_S for a free connection instead of failing at once with
"Too many connections". Nothing holds a pooled connection for long: waiters
block in the per-shard readers of bot/db/hub.py, which have their own.

REDIS_URL may name a Redis/Valkey Cluster node (found by asking it) or, as
`redis+sentinel://` (or `rediss+sentinel://`), the sentinels of a primary and its
replicas: bot/db/sentinel.py says how that URL reads and which passwords go where.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio
from redis.exceptions import RedisClusterException, RedisError

from bot.config import Settings
from bot.db.cluster import is_cluster_node
from bot.db.durability import report_replicas, warn_if_unsafe
from bot.db.replicas import configure as configure_acks
from bot.db.sentinel import BAD_SENTINEL_URL, is_sentinel_url, open_master
from bot.db.valkey.embedded import LOG_NAME, EmbeddedServer, ensure_server
from bot.errors import ConfigError, StoreUnavailable

__all__ = ["connect", "redact_url"]

# Bounds only the connect; reads stay unbounded because the notifier, workers and
# metrics block in XREADGROUP on purpose (for a second at most each).
# The client every store is built on: what `connect` returns, named for the layers above
# (bot.gate's Runtime holds it) so only bot.db and bot.store import redis.
Client = redis.asyncio.Redis

CONNECT_TIMEOUT = 5.0
POOL_WAIT_S = 20.0  # a command waits this long for a free connection, then fails (a burst
# of a thousand new long-polls on a busy loop took more than 5 s to drain, see bench/waiters.py)

BAD_URL = (
    "REDIS_URL {url} is not a Redis URL ({error}); "
    "fix: export REDIS_URL=redis://HOST:6379/0 (or rediss://, unix:///PATH), "
    "or unset it to use the embedded Valkey."
)
UNREACHABLE = (
    "Cannot reach Redis at {url}: {error}; fix: check that the server runs and the URL, "
    "user and password are right, or unset REDIS_URL to use the embedded Valkey."
)
EMBEDDED_UNREACHABLE = (
    "The embedded Valkey at {url} does not answer: {error}; fix: look at {log}, "
    "or set REDIS_URL to use another Redis/Valkey server."
)

_QUERY_PASSWORD = re.compile(r"(?i)([?&](?:sentinel_)?password=)[^&#]*")


async def connect(settings: Settings) -> tuple[Client, EmbeddedServer | None]:
    """Return a client that answered PING, and the embedded server if REDIS_URL is unset.

    The server is returned so the caller decides whether to stop it
    (`server.stop()` does nothing unless this process started it).
    """
    server: EmbeddedServer | None = None
    if settings.redis_url is not None:
        url = settings.redis_url.get_secret_value()
    else:
        # ensure_server blocks (lock, process start): keep it off the event loop.
        server = await asyncio.to_thread(ensure_server, settings.hitl_data_dir)
        url = server.url
    try:
        client = await _open_client(url, settings.hitl_redis_max_connections)
    except ValueError as exc:
        bad = BAD_SENTINEL_URL if is_sentinel_url(url) else BAD_URL
        raise ConfigError(bad.format(url=redact_url(url), error=exc)) from exc
    except (RedisError, OSError) as exc:
        if server is None:
            message = UNREACHABLE.format(url=redact_url(url), error=exc)
        else:
            message = EMBEDDED_UNREACHABLE.format(
                url=url, error=exc, log=server.data_dir / LOG_NAME
            )
        raise StoreUnavailable(message) from exc
    configure_acks(client, settings.hitl_replica_acks, settings.hitl_replica_ack_timeout_ms)
    if server is None:
        await warn_if_unsafe(client)
        await report_replicas(
            client, settings.hitl_replica_acks, settings.hitl_replica_ack_timeout_ms
        )
    return client, server


CLUSTER_POOL_FACTOR = 8


async def _open_client(url: str, max_connections: int) -> redis.asyncio.Redis:
    """A client that answered; a cluster client when the node at `url` is in a cluster.

    Any node of a Redis/Valkey Cluster will do: `INFO cluster` says whether the
    server runs in cluster mode, and the cluster client then finds the other
    nodes and follows the slots as they move (failover, resharding). Its pool per
    node cannot wait: past the bound a command fails at once (MaxConnectionsError).
    So a cluster node gets CLUSTER_POOL_FACTOR times the setting: a burst of
    clicks must queue on the server, not fail in the client. (Waiters hold no
    pool connection: the wake hub reads for them.)
    """
    kwargs: dict[str, Any] = {
        "decode_responses": True,
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "socket_timeout": None,  # redis-py 8 defaults to 5 s; a blocking read must outlive it
    }
    if is_sentinel_url(url):
        # The sentinels name the primary; a cluster runs no sentinels, so no INFO cluster.
        master = open_master(url, max_connections, POOL_WAIT_S, kwargs)
        try:
            await master.ping()
        except BaseException:
            await master.aclose()
            raise
        return master
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=POOL_WAIT_S, **kwargs
    )
    client = redis.asyncio.Redis.from_pool(pool)
    try:
        await client.ping()
        clustered = await is_cluster_node(client)
    except BaseException:
        await client.aclose()
        raise
    if not clustered:
        return client
    await client.aclose()
    try:
        cluster = redis.asyncio.RedisCluster.from_url(
            url, max_connections=max_connections * CLUSTER_POOL_FACTOR, **kwargs
        )
    except RedisClusterException as exc:  # a database other than 0, say
        raise ValueError(str(exc)) from exc
    try:
        await cluster.initialize()
    except RedisClusterException as exc:
        await cluster.aclose()
        raise RedisError(str(exc)) from exc
    except BaseException:
        await cluster.aclose()
        raise
    # RedisCluster shares Redis's command methods but not its class: the bot keeps
    # to single-slot commands (bot/db/cluster.py), so it stands in for one.
    return cast(redis.asyncio.Redis, cluster)


def redact_url(url: str) -> str:
    """`url` with any password replaced by ***, for messages and logs."""
    url = _QUERY_PASSWORD.sub(r"\1***", url)
    parts = urlsplit(url)
    if parts.password is None:
        return url
    userinfo, _, hostinfo = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostinfo}"))
