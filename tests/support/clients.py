"""Clients of the test store, whichever kind it is.

`HITL_TEST_CLUSTER=1` runs the tests on a local 3-primary + 3-replica Valkey
Cluster (tests/support/localcluster.py) instead of one server; tests that open their
own client go through `open_client` so they get a cluster client there.
"""

from __future__ import annotations

import os
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster

CLUSTER = os.environ.get("HITL_TEST_CLUSTER") == "1"


async def open_client(url: str, **kwargs: Any) -> Redis:
    kwargs.setdefault("decode_responses", True)
    if CLUSTER:
        kwargs.pop("single_connection_client", None)  # a cluster client has one pool per node
        kwargs.setdefault("socket_connect_timeout", 30)  # 200 clients at once meet 2 busy cores
        cluster = RedisCluster.from_url(url, **kwargs)
        # Initialised before use, as bot.db.connection does: redis-py 8.1's first
        # commands, sent at once on a fresh cluster client, race its initialisation.
        await cluster.initialize()
        return cast(Redis, cluster)
    return Redis.from_url(url, **kwargs)
