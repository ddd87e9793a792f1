"""Reading, verifying and exporting the audit trail kept beside each request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis

from bot.core.models import AuditEntry
from bot.core.proof.chain import Break, expand, verify
from bot.core.proof.chain_order import order_problems
from bot.core.proof.seal import Verify, unsealed
from bot.store import keys
from bot.store.requests import RequestStore


@dataclass(frozen=True)
class Finding:
    request_id: str
    seq: int
    why: str


async def lines(redis: Redis, rid: str) -> list[str]:
    return cast(list[str], await redis.lrange(keys.audit(rid), 0, -1))


async def entries(redis: Redis, rid: str) -> list[AuditEntry]:
    return [AuditEntry.parse(line) for line in await lines(redis, rid)]


# A request's history as the checks of `audit verify` read it: its id, one field of its
# record (None when the record is gone), its audit lines.
History = tuple[str, str | None, list[str]]


async def histories(
    store: RequestStore, since_ms: int, field: str, archived: Sequence[dict[str, Any]] = ()
) -> AsyncIterator[History]:
    """The archived requests' histories (records as bot/store/archive.py reads them), then
    each live one's created since `since_ms`, `field` read with its lines in one step."""
    for rec in archived:
        yield str(rec["id"]), rec["fields"].get(field), [str(x) for x in rec["audit"]]
    for rid in await store.ids_between(since_ms):
        pipe = store.redis.pipeline(transaction=True)  # one slot: the request and its audit
        pipe.hget(keys.request(rid), field)
        pipe.lrange(keys.audit(rid), 0, -1)
        value, got = await pipe.execute()
        yield rid, None if value is None else str(value), list(got)


async def verify_request(redis: Redis, rid: str) -> Break | None:
    pipe = redis.pipeline(transaction=True)  # one snapshot: no entry lands between the reads
    pipe.lrange(keys.audit(rid), 0, -1)
    pipe.hget(keys.request(rid), "audit_head")
    got, head = await pipe.execute()
    return verify(list(got), head or "")


async def verify_all(store: RequestStore, since_ms: int = 0) -> AsyncIterator[Finding]:
    """Every broken chain, first break per request."""
    for rid in await store.ids_between(since_ms):
        broken = await verify_request(store.redis, rid)
        if broken is not None:
            yield Finding(rid, broken.seq, broken.why)


async def disorder_request(redis: Redis, rid: str) -> list[Break]:
    """The entries of one chain out of order (bot/core/proof/chain_order.py), read with the
    version the request stands at in one snapshot."""
    pipe = redis.pipeline(transaction=True)
    pipe.lrange(keys.audit(rid), 0, -1)
    pipe.hget(keys.request(rid), "version")
    got, version = await pipe.execute()
    # A version that is not a number is not compared: the request would not even load.
    stands = int(version) if version is not None and str(version).isdigit() else None
    return order_problems(list(got), stands)


async def disordered_all(store: RequestStore, since_ms: int = 0) -> AsyncIterator[Finding]:
    """Every entry out of order: a version going back, an entry recorded twice, a request
    put back below the version its history reached."""
    for rid in await store.ids_between(since_ms):
        for broken in await disorder_request(store.redis, rid):
            yield Finding(rid, broken.seq, broken.why)


async def unsealed_all(
    store: RequestStore, verify: Verify, since_ms: int = 0
) -> AsyncIterator[Finding]:
    """Every decision recorded without serve's valid seal (bot/core/proof/seal.py `unsealed`)."""
    for rid in await store.ids_between(since_ms):
        for seq, why in unsealed(rid, await lines(store.redis, rid), verify):
            yield Finding(rid, seq, why)


async def export(store: RequestStore, since_ms: int = 0) -> AsyncIterator[str]:
    """JSON lines, one per entry, each tagged with its request id, oldest request first."""
    for rid in await store.ids_between(since_ms):
        for line in await lines(store.redis, rid):
            entry = expand(json.loads(line))  # the keys consumers always got, stored or not
            if entry.get("at", 0) >= since_ms:
                yield json.dumps({"request_id": rid, **entry}, sort_keys=True)
