"""The chaos soak's replicated stores: a 3+3 Valkey Cluster, or a primary with two
replicas under three sentinels, whose current primary is `kill -9`'d every 20-40 s.

With `lag_s` > 0 the primary's replicas first stall and lose their link for that long
while the primary goes on taking writes (a partition, a replica that fell behind), and
then the primary dies: the replica promoted lacks what the primary acknowledged
meanwhile. That is the window replica acks close, made wide enough to measure.

The killed node is started again once a replica has taken its place, as a supervisor
with a restart delay would: it rejoins as a replica and resyncs. (Restarted at once,
before the failover, a node without an append-only file would come back an empty
primary: that loses data whatever the bot does, and is not what this measures.)
"""

from __future__ import annotations

import asyncio
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Protocol

# The local cluster and sentinels are test code (tests/): found from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.localcluster import LocalCluster


class Replicated(Protocol):
    @property
    def url(self) -> str: ...

    def kill_primary(self, rnd: random.Random, lag_s: float) -> Any: ...

    def rejoin(self, victim: Any) -> None: ...

    def stop(self) -> None: ...


class ClusterStore:
    """3 primaries, a replica each; the node timeout (2 s) bounds each failover."""

    def __init__(self) -> None:
        self.cluster = LocalCluster().start()

    @property
    def url(self) -> str:
        return self.cluster.url

    def kill_primary(self, rnd: random.Random, lag_s: float) -> Any:
        victim = rnd.choice(self.cluster.primaries())
        lag(victim, self.cluster.replicas_of(victim), lag_s, self.cluster.kill)
        return victim

    def rejoin(self, victim: Any) -> None:
        self.cluster.wait_failover(120)  # a replica serves the victim's slots now
        self.cluster.restart(victim, timeout=180)

    def stop(self) -> None:
        self.cluster.stop()


class SentinelStore:
    """A primary, two replicas and three sentinels (tests/support/localsentinel.py)."""

    def __init__(self) -> None:
        from tests.support.localsentinel import LocalSentinel

        self.setup = LocalSentinel().start()

    @property
    def url(self) -> str:
        return self.setup.url

    def kill_primary(self, rnd: random.Random, lag_s: float) -> Any:
        victim = self.setup.primary()
        others = [n for n in self.setup.nodes if n is not victim and n.alive]
        lag(victim, others, lag_s, self.setup.kill)
        return victim

    def rejoin(self, victim: Any) -> None:
        self.setup.wait_settled(120)  # the sentinels promoted a replica
        self.setup.restart(victim)

    def stop(self) -> None:
        self.setup.stop()


def lag(victim: Any, replicas: list[Any], lag_s: float, kill: Any) -> None:
    """Stall `replicas` and cut their link for `lag_s` (what the primary already sent
    would otherwise still be read on waking), kill -9 `victim`, wake the replicas."""
    if lag_s <= 0:
        kill(victim)
        return
    for r in replicas:
        r.proc.send_signal(signal.SIGSTOP)
    try:
        with victim.client() as c:
            c.execute_command("CLIENT", "KILL", "TYPE", "replica")
        time.sleep(lag_s)  # the primary takes writes its replicas will never see
        kill(victim)
    finally:
        for r in replicas:
            r.proc.send_signal(signal.SIGCONT)


def open_store(kind: str) -> Replicated:
    return ClusterStore() if kind == "cluster" else SentinelStore()


async def primary_chaos(
    store: Replicated,
    stop: asyncio.Event,
    kills: Counter[str],
    every: tuple[float, float],
    lag_s: float = 0.0,
) -> None:
    """Until `stop`: wait 20-40 s (`every`), kill -9 the primary, restart it once a
    replica took over."""
    rnd = random.Random(11)
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), rnd.uniform(*every))
            return
        except TimeoutError:
            pass
        victim = await asyncio.to_thread(store.kill_primary, rnd, lag_s)
        kills["primary"] += 1
        await asyncio.to_thread(store.rejoin, victim)
