"""Anchoring the audit chains outside Redis: every request's chain head, signed.

`export_heads` writes what `hitl-bot audit heads` prints: for each request its id, the
hash of its last audit entry and that entry's seq, signed with serve's key. An operator
keeps the file where Redis cannot reach. `check_heads` later finds every request whose
history up to that entry is no longer the same: rewritten (even with every link
recomputed, the entry at that seq hashes otherwise), cut short, or deleted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from bot.core.proof.chain import line_hash
from bot.core.proof.seal import HEADS_DOMAIN, b64, heads_bytes, unb64
from bot.signing import PublicKeys, Signer
from bot.store import keys
from bot.store.requests import RequestStore


@dataclass(frozen=True)
class HeadFinding:
    request_id: str
    why: str


class BadHeadsFile(ValueError):
    """The heads file is not one this bot's key signed."""


async def _heads(redis: Redis, ids: list[str]) -> list[tuple[str, str, int]]:
    pipe = redis.pipeline(transaction=False)
    for rid in ids:
        pipe.hmget(keys.request(rid), ["audit_head", "audit_seq"])
    got = await pipe.execute()
    return [(rid, str(h or ""), int(s or 0)) for rid, (h, s) in zip(ids, got, strict=True) if h]


async def export_heads(store: RequestStore, signer: Signer, now: int) -> dict[str, Any]:
    heads = await _heads(store.redis, await store.ids_between())
    data = heads_bytes(key_id=signer.key_id, at=now, heads=heads)
    return {
        "format": HEADS_DOMAIN,
        "key_id": signer.key_id,
        "at": now,
        "heads": [{"id": rid, "head": h, "seq": s} for rid, h, s in sorted(heads)],
        "signature": b64(signer.sign(data)),
    }


def read_heads(text: str, trusted: PublicKeys) -> list[tuple[str, str, int]]:
    """The heads of a file this bot's key signed; BadHeadsFile otherwise."""
    try:
        doc = json.loads(text)
        kid, at = str(doc["key_id"]), int(doc["at"])
        heads = [(str(x["id"]), str(x["head"]), int(x["seq"])) for x in doc["heads"]]
        sig = unb64(str(doc["signature"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise BadHeadsFile(f"not a heads file: {exc}") from None
    if doc.get("format") != HEADS_DOMAIN or not trusted.verify(
        kid, heads_bytes(key_id=kid, at=at, heads=heads), sig
    ):
        raise BadHeadsFile("its signature is not this bot's key's")
    return heads


async def check_heads(redis: Redis, heads: list[tuple[str, str, int]]) -> list[HeadFinding]:
    """Each request whose history up to the kept head is not what it was."""
    pipe = redis.pipeline(transaction=False)
    for rid, _, seq in heads:
        pipe.exists(keys.request(rid))
        pipe.llen(keys.audit(rid))
        pipe.lindex(keys.audit(rid), seq - 1)
    got: list[Any] = await pipe.execute()
    found: list[HeadFinding] = []
    for i, (rid, head, seq) in enumerate(heads):
        exists, length, line = got[3 * i], got[3 * i + 1], got[3 * i + 2]
        if not exists and not length:
            found.append(HeadFinding(rid, "deleted: the request and its history are gone"))
        elif length < seq:
            found.append(HeadFinding(rid, f"history cut short: {length} entries, {seq} kept"))
        elif line is None or line_hash(str(line)) != head:
            found.append(HeadFinding(rid, f"history rewritten: entry {seq} is not the one kept"))
    return found
