"""Say so when an external Redis may lose acknowledged approvals.

A decision is acknowledged once Redis applied it. With `appendonly no` (the Redis
default) a crash loses everything since the last snapshot, and a `maxmemory-policy`
other than `noeviction` may evict a pending request under memory pressure. Neither
is the bot's to change, so it warns once at start, naming the setting and the fix.
Managed services often disable CONFIG; then it warns that it could not check.
The embedded Valkey is configured by us (AOF, noeviction) and is not checked.

Replication is the other window: a primary lost right after a write may take it with
it. `report_replicas` says at start what transitions are acknowledged with
(HITL_REPLICA_ACKS) and warns where that leaves the window open, or where it asks for
more replicas than the server has (then every decision is refused as not saved).
"""

from __future__ import annotations

import logging
from typing import cast

import redis.asyncio
from redis.exceptions import RedisError

from bot.db.cluster import is_cluster

log = logging.getLogger(__name__)

WANTED = {"appendonly": "yes", "maxmemory-policy": "noeviction"}
FIX = {
    "appendonly": "CONFIG SET appendonly yes (and appendfsync everysec or always) on the "
    "server, or enable persistence in your managed Redis",
    "maxmemory-policy": "CONFIG SET maxmemory-policy noeviction on the server",
}
UNSAFE = "Redis {name} is {value!r}: acknowledged approvals may be lost; fix: {fix}"
UNCHECKED = (
    "Could not read the Redis settings (CONFIG GET refused: {error}); make sure the server "
    "keeps an append-only file and uses maxmemory-policy noeviction"
)


async def unsafe_settings(client: redis.asyncio.Redis) -> tuple[dict[str, str], str | None]:
    """(setting -> value, for each that differs from WANTED; the error that kept them
    unread, e.g. a managed service refusing CONFIG GET)."""
    found: dict[str, str] = {}
    for name, wanted in WANTED.items():
        try:
            got = await client.config_get(name)
        except RedisError as exc:
            return {}, str(exc)
        value = str(got.get(name, "")) if isinstance(got, dict) else ""
        if value and value != wanted:
            found[name] = value
    return found, None


async def warn_if_unsafe(client: redis.asyncio.Redis) -> list[str]:
    """Log one warning per unsafe setting (or one that nothing could be checked)."""
    found, error = await unsafe_settings(client)
    warnings = [UNSAFE.format(name=n, value=v, fix=FIX[n]) for n, v in found.items()]
    if error is not None:
        warnings = [UNCHECKED.format(error=error)]
    for line in warnings:
        log.warning(line)
    return warnings


ACKS_USED = "Transitions are acknowledged once {n} replica(s) confirm them (within {ms} ms)"
ACKS_OFF = (
    "Redis has {r} replica(s) but HITL_REPLICA_ACKS=0: a decision or claim acknowledged in "
    "the milliseconds before a failover can be lost; fix: export HITL_REPLICA_ACKS=1"
)
ACKS_SHORT = (
    "HITL_REPLICA_ACKS={n} but a primary has only {r} replica(s): every decision and claim "
    "will be refused as not yet saved until {n} replicas are connected"
)


async def fewest_replicas(client: redis.asyncio.Redis) -> int | None:
    """The fewest replicas connected to any primary (None: the server would not say)."""
    try:
        if is_cluster(client):
            nodes = await cast(redis.asyncio.RedisCluster, client).cluster_nodes()
            per: dict[str, int] = {}
            for node in nodes.values():
                flags = str(node.get("flags", ""))
                if "master" in flags and "fail" not in flags:
                    per.setdefault(str(node["node_id"]), 0)
            for node in nodes.values():
                if "slave" in str(node.get("flags", "")) and "fail" not in str(node["flags"]):
                    master = str(node.get("master_id", ""))
                    if master in per:
                        per[master] += 1
            return min(per.values()) if per else None
        info = await client.info("replication")
        return int(info.get("connected_slaves", 0))
    except (RedisError, KeyError, ValueError):
        return None


async def report_replicas(client: redis.asyncio.Redis, n: int, timeout_ms: int) -> list[str]:
    """Log how transitions are acknowledged; warn where replicas make that unsafe."""
    replicas = await fewest_replicas(client)
    if n > 0:
        log.info(ACKS_USED.format(n=n, ms=timeout_ms))
    warnings = []
    if n == 0 and replicas:
        warnings.append(ACKS_OFF.format(r=replicas))
    elif replicas is not None and n > replicas:
        warnings.append(ACKS_SHORT.format(n=n, r=replicas))
    for line in warnings:
        log.warning(line)
    return warnings
