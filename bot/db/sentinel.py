"""REDIS_URL through Redis/Valkey Sentinel: `redis+sentinel://` and `rediss+sentinel://`.

    redis+sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB]
                     [?sentinel_password=PASSWORD]

The hosts are the sentinels (port 26379 when left out), SERVICE the name they
monitor the primary under (`sentinel monitor SERVICE ...`), DB the database
(0 when left out). Every connection asks the sentinels where the primary is, so
after a failover the next connection goes to the promoted replica.

Passwords: USER and PASSWORD are the data nodes' (the primary and its replicas,
their `requirepass` or ACL user), as in a plain `redis://` URL. Sentinels often
run without a password, or with one of their own, so they get none unless
`sentinel_password` is given (the same one again if they share it). `rediss+`
speaks TLS to the sentinels and the data nodes alike.

During a failover commands fail with a ConnectionError (no primary known yet,
connection refused, or the old primary answering READONLY, which redis-py turns
into a ConnectionError and a new lookup): bot.db.failures.STORE_DOWN, so
callers are told to try again, and the pool recovers without a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import redis.asyncio
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

__all__ = ["BAD_SENTINEL_URL", "SentinelUrl", "is_sentinel_url", "open_master", "parse"]

SCHEMES = {"redis+sentinel": False, "rediss+sentinel": True}  # scheme -> TLS
DEFAULT_PORT = 26379
# A sentinel answers a lookup at once or not at all: one that hangs must not hold the
# connect behind it (the next sentinel is asked).
SENTINEL_TIMEOUT_S = 5.0

BAD_SENTINEL_URL = (
    "REDIS_URL {url} is not a Sentinel URL ({error}); fix: export "
    "REDIS_URL=redis+sentinel://[:PASSWORD@]HOST:26379[,HOST:26379...]/SERVICE[/DB] "
    "(SERVICE as in `sentinel monitor SERVICE`), or unset it to use the embedded Valkey."
)


@dataclass(frozen=True)
class SentinelUrl:
    sentinels: list[tuple[str, int]]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    sentinel_password: str | None = field(default=None, repr=False)
    tls: bool = False


def is_sentinel_url(url: str) -> bool:
    return url.partition("://")[0].lower() in SCHEMES


def parse(url: str) -> SentinelUrl:
    """The parts of a Sentinel URL; ValueError saying what is wrong with a bad one."""
    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise ValueError(f"the scheme must be one of {', '.join(sorted(SCHEMES))}")
    parts = urlsplit(url)
    userinfo, _, hostlist = parts.netloc.rpartition("@")
    sentinels = [_host(item) for item in hostlist.split(",")]
    segments = parts.path.strip("/").split("/") if parts.path.strip("/") else []
    if not segments or not segments[0]:
        raise ValueError("no service name: add /SERVICE after the sentinels")
    if len(segments) > 2:
        raise ValueError("the path must be /SERVICE or /SERVICE/DB")
    db = 0
    if len(segments) == 2:
        if not segments[1].isdigit():
            raise ValueError(f"the database {segments[1]!r} is not a number")
        db = int(segments[1])
    username = password = None
    if userinfo:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"sentinel_password"})
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r}; only sentinel_password is read")
    sentinel_password = query["sentinel_password"][-1] if "sentinel_password" in query else None
    return SentinelUrl(
        sentinels=sentinels,
        service=unquote(segments[0]),
        db=db,
        username=username,
        password=password,
        sentinel_password=sentinel_password or None,
        tls=SCHEMES[scheme.lower()],
    )


def _host(item: str) -> tuple[str, int]:
    if not item.strip():
        raise ValueError("a sentinel host is missing")
    one = urlsplit(f"//{item.strip()}")
    try:
        port = one.port
    except ValueError as exc:
        raise ValueError(f"the sentinel {item!r} has a bad port") from exc
    if not one.hostname:
        raise ValueError(f"the sentinel {item!r} has no host")
    return one.hostname, port or DEFAULT_PORT


class BoundedSentinelPool(SentinelConnectionPool, BlockingConnectionPool):
    """A sentinel-managed pool that waits for a free connection past its bound, as the
    plain path's BlockingConnectionPool does, instead of failing at once."""

    def __init__(self, service_name: str, sentinel_manager: Sentinel, **kwargs: Any) -> None:
        super().__init__(service_name, sentinel_manager, **kwargs)  # type: ignore[no-untyped-call,unused-ignore]
        # Kept apart because Sentinel.discover_master reorders its list with a swap that
        # concurrent lookups (every connection of a pool after a failover) can garble,
        # one client in it twice and another gone: that one must still be closed.
        self.sentinel_clients = tuple(sentinel_manager.sentinels)

    async def disconnect(self, inuse_connections: bool = True) -> None:
        await super().disconnect(inuse_connections)
        if inuse_connections:
            # Closing the client closes its pool (this) but not the sentinels' clients,
            # and redis-py 6.2's Sentinel has no aclose(): their sockets would be left open.
            for client in self.sentinel_clients:
                await client.connection_pool.disconnect()


def open_master(
    url: str, max_connections: int, pool_wait_s: float, kwargs: dict[str, Any]
) -> redis.asyncio.Redis:
    """A client of the primary the sentinels of `url` name, with the plain path's
    `kwargs`; not yet connected (the first command asks the sentinels)."""
    parsed = parse(url)
    sentinel_kwargs: dict[str, Any] = {
        "socket_connect_timeout": kwargs["socket_connect_timeout"],
        "socket_timeout": SENTINEL_TIMEOUT_S,
        "decode_responses": True,
    }
    if parsed.sentinel_password is not None:
        sentinel_kwargs["password"] = parsed.sentinel_password
    if parsed.tls:
        sentinel_kwargs["ssl"] = True
    sentinel = Sentinel(parsed.sentinels, sentinel_kwargs=sentinel_kwargs)  # type: ignore[no-untyped-call,unused-ignore]
    node_kwargs: dict[str, Any] = {**kwargs, "db": parsed.db}
    if parsed.username is not None:
        node_kwargs["username"] = parsed.username
    if parsed.password is not None:
        node_kwargs["password"] = parsed.password
    if parsed.tls:
        node_kwargs["ssl"] = True
    client: redis.asyncio.Redis = sentinel.master_for(
        parsed.service,
        connection_pool_class=BoundedSentinelPool,
        max_connections=max_connections,
        timeout=pool_wait_s,
        **node_kwargs,
    )
    return client
