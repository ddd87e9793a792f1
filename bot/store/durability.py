"""Say so when an external Redis may lose acknowledged approvals.

A decision is acknowledged once Redis applied it. With `appendonly no` (the Redis
default) a crash loses everything since the last snapshot, and a `maxmemory-policy`
other than `noeviction` may evict a pending request under memory pressure. Neither
is the bot's to change, so it warns once at start, naming the setting and the fix.
Managed services often disable CONFIG; then it warns that it could not check.
The embedded Valkey is configured by us (AOF, noeviction) and is not checked.
"""

from __future__ import annotations

import logging

import redis.asyncio
from redis.exceptions import RedisError

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


async def warn_if_unsafe(client: redis.asyncio.Redis) -> list[str]:
    """Log one warning per unsafe setting (or one that nothing could be checked)."""
    warnings: list[str] = []
    for name, wanted in WANTED.items():
        try:
            got = await client.config_get(name)
        except RedisError as exc:
            warnings = [UNCHECKED.format(error=exc)]
            break
        value = str(got.get(name, "")) if isinstance(got, dict) else ""
        if value and value != wanted:
            warnings.append(UNSAFE.format(name=name, value=value, fix=FIX[name]))
    for line in warnings:
        log.warning(line)
    return warnings
