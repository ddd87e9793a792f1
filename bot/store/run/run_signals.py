"""A worker's local knowledge of its runs' corrections and stops, kept by pub/sub.

Before every free call the gate must know whether a person queued a correction or
asked the run to stop. Asking the store costs a round trip the call waits on. Instead a
process subscribes once to each run it serves (`keys.run_signal`), and whoever queues a
correction or asks a stop publishes there after writing it (bot/store/run/steering.py,
bot/gate/corrections.py).

A run reads `clear` only while all of these hold; otherwise the caller asks the store:
- its channel's subscription was confirmed by the server, on the connection up now;
- a store read begun after that confirmation found nothing queued and no stop;
- no message for the run has arrived since that read began;
- the connection answered a PING within STALE_S (a link that died silently is not
  trusted).
A reconnect (redis-py subscribes again by itself) starts a new epoch: a message may have
been lost while the link was down, so every run is read from the store again.

Not on a cluster: there a run's channel would be followed on its slot's node (sharded
pub/sub), which this does not do; `signals_for` answers None and the gate asks the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections import OrderedDict
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.connection import Connection
from redis.exceptions import RedisError

from bot.db.cluster import is_cluster
from bot.store import keys

__all__ = ["RunSignals", "close_signals", "followed", "signal", "signals_for"]

log = logging.getLogger(__name__)

PING_S = 1.0  # how often the link is proved alive
STALE_S = 3.0  # no PONG for this long: nothing local is trusted
READ_S = 0.05  # the reader's longest wait, so a new run is subscribed soon
MAX_RUNS = 1024  # runs followed at once; the oldest is dropped (it asks the store again)
BACKOFF_FIRST_S, BACKOFF_CAP_S = 0.05, 5.0

Mark = tuple[int, int]  # (epoch, messages seen for the run) when a store read began


def followed(redis: Redis) -> bool:
    """Whether runs are followed on `redis` (and so signalled): one Redis, not a cluster
    (there a run's channel would have to be followed on its slot's node)."""
    return not is_cluster(redis)


async def signal(redis: Redis, run_id: str) -> None:
    """Tell the run's followers to read the store again (after writing the change)."""
    if followed(redis):
        await redis.publish(keys.run_signal(run_id), "1")


def _run_of(channel: Any) -> str | None:
    name = channel.decode() if isinstance(channel, bytes) else str(channel)
    _, sep, rest = name.partition("{run:")
    if not sep or not rest.endswith("}:signal"):
        return None
    return rest.removesuffix("}:signal")


class RunSignals:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._epoch = 0
        self._seen: dict[str, int] = {}  # messages received per run
        self._confirmed: dict[str, int] = {}  # the epoch its subscription was confirmed in
        self._clear: dict[str, Mark] = {}  # what the last clear store read vouches for
        self._wanted: OrderedDict[str, None] = OrderedDict()
        self._pong_at = 0.0
        self._task: asyncio.Task[None] | None = None

    def clear(self, run_id: str) -> bool:
        """True: no correction is queued and no stop asked, as far as the store said
        after the subscription was up and nothing was published since."""
        mark = self._clear.get(run_id)
        return (
            mark is not None
            and mark == (self._epoch, self._seen.get(run_id, 0))
            and time.monotonic() - self._pong_at < STALE_S
        )

    def mark(self, run_id: str) -> Mark | None:
        """Taken just before a store read of the run's queue and stop flag: what a read
        that finds both empty vouches for (None while the subscription is not up)."""
        self.watch(run_id)
        if self._confirmed.get(run_id) != self._epoch:
            return None
        return (self._epoch, self._seen.get(run_id, 0))

    def found_clear(self, run_id: str, mark: Mark | None) -> None:
        if mark is not None:
            self._clear[run_id] = mark

    def dirty(self, run_id: str) -> None:
        """A store read found a correction queued or a stop: ask the store next time."""
        self._clear.pop(run_id, None)

    def watch(self, run_id: str) -> None:
        if run_id in self._wanted:
            self._wanted.move_to_end(run_id)
        else:
            self._wanted[run_id] = None
            while len(self._wanted) > MAX_RUNS:
                old, _ = self._wanted.popitem(last=False)
                self._clear.pop(old, None)
                self._confirmed.pop(old, None)
                self._seen.pop(old, None)
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._follow())

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._epoch += 1

    def _lost(self) -> None:
        self._epoch += 1  # nothing vouched for before this is trusted any more

    async def _follow(self) -> None:
        backoff = BACKOFF_FIRST_S
        failures = 0  # in a row: one warning per outage, not one per retry
        while True:
            ps = _Followed(self, self.redis)
            subscribed: set[str] = set()
            pinged = 0.0
            try:
                while True:
                    new = [r for r in self._wanted if r not in subscribed]
                    gone = [r for r in subscribed if r not in self._wanted]
                    if new:
                        await ps.subscribe(*(keys.run_signal(r) for r in new))
                        subscribed.update(new)
                    if gone:
                        await ps.unsubscribe(*(keys.run_signal(r) for r in gone))
                        subscribed.difference_update(gone)
                    if subscribed and time.monotonic() - pinged > PING_S:
                        await ps.ping()
                        pinged = time.monotonic()
                    if subscribed:
                        got = await ps.get_message(timeout=READ_S)
                        if got is not None:
                            self._on(got)
                    else:
                        await asyncio.sleep(READ_S)
                    backoff, failures = BACKOFF_FIRST_S, 0
            except (RedisError, OSError) as exc:
                self._lost()
                failures += 1
                level = logging.WARNING if failures == 1 else logging.DEBUG
                log.log(level, "run signals: subscription lost (%s); asking the store", exc)
            finally:
                with contextlib.suppress(Exception):
                    await ps.aclose()  # type: ignore[no-untyped-call,unused-ignore]
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_CAP_S)

    def _on(self, m: dict[str, Any]) -> None:
        kind = m.get("type")
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind == "pong":
            self._pong_at = time.monotonic()
            return
        run = _run_of(m.get("channel"))
        if run is None:
            return
        if kind == "subscribe":
            self._confirmed[run] = self._epoch
        elif kind == "message":
            self._seen[run] = self._seen.get(run, 0) + 1
            self._clear.pop(run, None)


class _Followed(PubSub):
    """redis-py's PubSub, which subscribes again by itself after a reconnect: each
    connect tells the follower that whatever was published meanwhile is unknown."""

    def __init__(self, owner: RunSignals, redis: Redis) -> None:
        super().__init__(redis.connection_pool)
        self._owner = owner

    async def on_connect(self, connection: Connection) -> None:
        self._owner._lost()
        await super().on_connect(connection)


_by_client: weakref.WeakKeyDictionary[Redis, RunSignals] = weakref.WeakKeyDictionary()


def signals_for(redis: Redis) -> RunSignals | None:
    """The process's follower for `redis` (one per client); None on a cluster."""
    if not followed(redis):
        return None
    got = _by_client.get(redis)
    if got is None:
        got = _by_client[redis] = RunSignals(redis)
    return got


async def close_signals(redis: Redis) -> None:
    """Stop following runs on `redis` (before closing it): the follower would otherwise
    open a connection again, and keep trying after the server is gone."""
    got = _by_client.pop(redis, None)
    if got is not None:
        await got.aclose()
