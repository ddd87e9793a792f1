"""A Valkey Cluster of its own for each module here: the failover test kills nodes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.store import keys
from tests.support.localcluster import LocalCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    c = LocalCluster().start()
    try:
        yield c
    finally:
        c.stop()


def one_id_per_shard(prefix: str = "c") -> list[str]:
    """Ids whose hash tags are all 16 shards, so every node of the cluster is used."""
    out: dict[int, str] = {}
    n = 0
    while len(out) < keys.SHARDS:
        n += 1
        out.setdefault(keys.shard_of(f"{prefix}{n:05d}"), f"{prefix}{n:05d}")
    return [out[s] for s in range(keys.SHARDS)]
