"""How hitl-bot's keys map to Redis slots: the prefix, the shard hash tags, and the
keys the plumbing itself writes (a process's wait control stream, a replica mark).

Below the records (bot/store/keys.py builds every record key on these), so the
connection, the wait hub and the replica acknowledgements know a key's slot without
knowing what it holds.
"""

from __future__ import annotations

import re
import zlib

PREFIX = "hitl:"
SHARDS = 16
_HASH_TAG = re.compile(r"\{[^{}]+\}")
_SHARD_TAG = re.compile(re.escape(PREFIX) + r"\{s(\d{2})\}:")


def shard_of(item_id: str) -> int:
    return zlib.crc32(item_id.encode()) % SHARDS


def tag(shard: int) -> str:
    return f"{PREFIX}{{s{shard:02d}}}:"


def shard_of_key(key: str) -> int:
    """The shard of a key built by this module from a shard tag (`hitl:{s07}:...`)."""
    found = _SHARD_TAG.match(key)
    if found is None:
        raise ValueError(f"{key!r} carries no shard tag")
    return int(found.group(1))


def wait_control(shard: int, hub_id: str) -> str:
    """One process's control stream in a shard: an entry there wakes that process's
    blocked wait reader so it starts watching a new wake key (hub.py)."""
    return f"{tag(shard)}waits:{hub_id}"


def replica_mark(key: str) -> str:
    """A throwaway key in `key`'s slot (its hash tag) that a replica-acknowledged step
    writes after its script, so WAIT has a write to confirm even when the script wrote
    nothing (replicas.py)."""
    found = _HASH_TAG.search(key)
    # A key without a tag hashes whole: the same slot as a tag of all of it.
    return f"{PREFIX}{found.group(0) if found else '{' + key + '}'}:acked"
