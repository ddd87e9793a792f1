"""One blocking reader per shard per process, fanning wake-ups out to in-process waiters.

A waiter (a long-poll, an SDK `decision()`, a worker's gate) holding a pooled
connection in its own `XREAD BLOCK` would let a few hundred of them starve
everything else (`/healthz`, creates, a person's click) with "Too many
connections". So a waiter is an asyncio future: the hub keeps, per shard, one
task with its own connection (outside the pool) that blocks in a single XREAD
over every wake key its waiters watch, and resolves the futures whose item moved.
Keys of one shard share a hash tag, so that one XREAD stays valid on Cluster.

Correctness rests on the stream ids being item versions: the reader reads each
key from the lowest version its waiters saw, so a change that lands between a
waiter's load and the reader's next block is still returned at once.

A new waiter on a key the current block does not cover must not wait for that
block to end. We wake the reader by adding an entry to this process's control
stream in the same shard, which the reader always includes in its XREAD. Not
CLIENT UNBLOCK: that needs the reader's connection id, the `client` ACL category
(often denied on managed Redis) and, on Cluster, the node the reader sits on;
an XADD on a `hitl:` key needs none of these. At most one such nudge per shard
is in flight per block, so a burst of a thousand new waiters costs a handful.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import weakref
from dataclasses import dataclass, field
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import AbstractConnection, Connection

from bot import messages as msg
from bot.db import slots
from bot.db.cluster import is_cluster
from bot.errors import StoreUnavailable

__all__ = ["WaitHub", "close_hub", "hub_for"]

log = logging.getLogger(__name__)

BLOCK_MS = 5_000  # one reader block; also how long an idle reader lingers after its last waiter
READ_TIMEOUT_S = BLOCK_MS / 1000 + 5  # a dead peer is noticed, not waited on forever
CONTROL_TTL_MS = 3_600_000  # a crashed process's control stream goes away by itself
COUNT = 16  # entries per key per read: the newest is all a waiter needs
BACKOFF_FIRST_S, BACKOFF_CAP_S = 0.05, 5.0


@dataclass(eq=False)
class _Waiter:
    after: int  # the item version the waiter saw; anything newer wakes it
    done: asyncio.Future[None]


@dataclass(eq=False)
class _Shard:
    number: int
    control: str
    control_last: str = "0-0"
    waiters: dict[str, set[_Waiter]] = field(default_factory=dict)
    # key -> version the reader's current block reads from; None while not blocked
    reading: dict[str, int] | None = None
    nudged: bool = False  # a control entry is on its way for the current block
    task: asyncio.Task[None] | None = None


class WaitHub:
    """The waits of one Redis client (one process's pool); see the module docstring."""

    def __init__(self, redis: Redis) -> None:
        self._redis = weakref.ref(redis)  # the hub must not keep its client alive
        # A cluster client has no single pool: each reader connects to the node that
        # owns its shard's slot (bot/db/cluster.py), looked up at every (re)connect.
        pool = None if is_cluster(redis) else redis.connection_pool
        self._connection_class = Connection if pool is None else pool.connection_class
        # Our own connections, never the pool's: decoded replies, and a read timeout
        # past the block (the pool's may be shorter, or none at all).
        self._connection_kwargs: dict[str, Any] = {
            **({} if pool is None else pool.connection_kwargs),
            "decode_responses": True,
            "socket_timeout": READ_TIMEOUT_S,
        }
        hub_id = secrets.token_hex(6)
        self._shards = [_Shard(s, slots.wait_control(s, hub_id)) for s in range(slots.SHARDS)]
        self._closed = False

    @property
    def waiting(self) -> int:
        """Waiters held right now, over every shard."""
        return sum(len(ws) for s in self._shards for ws in s.waiters.values())

    async def changed(self, wake_key: str, after: int, timeout_s: float) -> bool:
        """True once `wake_key` holds an entry newer than version `after` (or the
        reader reconnected, so the caller must look again); False when `timeout_s`
        ran out first. Cancelling the caller frees its waiter at once."""
        if timeout_s <= 0:
            return False
        if self._closed:
            raise RuntimeError("the wait hub is closed")
        shard = self._shards[slots.shard_of_key(wake_key)]
        me = _Waiter(after, asyncio.get_running_loop().create_future())
        shard.waiters.setdefault(wake_key, set()).add(me)
        try:
            if shard.task is None:
                shard.task = asyncio.create_task(
                    self._read(shard), name=f"hitl-waits-{shard.number}"
                )
            else:
                await self._nudge(shard, wake_key, after)
            try:
                async with asyncio.timeout(timeout_s):
                    await me.done
            except TimeoutError:
                return me.done.done()
            return True
        finally:
            self._forget(shard, wake_key, me)

    async def aclose(self) -> None:
        """Stop every reader and close its connection; pending waits raise StoreUnavailable."""
        self._closed = True
        for shard in self._shards:  # fail closed: never a silent "nothing changed"
            self._fail_all(shard)
        tasks = [s.task for s in self._shards if s.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        redis = self._live_client()
        if redis is not None:
            with contextlib.suppress(Exception):  # best effort: the TTL cleans up otherwise
                pipe = redis.pipeline(transaction=False)
                for s in self._shards:
                    pipe.delete(s.control)  # one key per command: shards are different slots
                await pipe.execute()

    def _forget(self, shard: _Shard, key: str, me: _Waiter) -> None:
        ws = shard.waiters.get(key)
        if ws is not None:
            ws.discard(me)
            if not ws:
                del shard.waiters[key]

    async def _nudge(self, shard: _Shard, key: str, after: int) -> None:
        """Wake the reader if its current block does not already cover this waiter."""
        if shard.reading is None or shard.nudged:
            return  # between blocks (the next one includes us), or a nudge is on its way
        if key in shard.reading and shard.reading[key] <= after:
            return
        redis = self._live_client()
        if redis is None:
            return  # the reader ends at its next (re)connect and fails this waiter
        shard.nudged = True
        try:
            pipe = redis.pipeline(transaction=False)
            pipe.xadd(shard.control, {"w": "1"}, maxlen=8, approximate=True)
            pipe.pexpire(shard.control, CONTROL_TTL_MS)
            await pipe.execute()
        except BaseException as exc:
            shard.nudged = False
            if not isinstance(exc, Exception):
                raise
            # A busy pool or a blip must not fail the wait: the reader's next block,
            # at most BLOCK_MS away, includes this waiter anyway.
            log.debug("waking the shard %d wait reader failed: %s", shard.number, exc)

    def _live_client(self) -> Redis | None:
        """The client this hub serves; None once it is gone or was closed under it.

        A closed cluster client still answers: redis-py reconnects on next use. But
        nobody would close what a topology refresh opens then, so the reader must
        not reconnect through it. (A plain client's reader owns its one connection.)
        """
        redis = self._redis()
        if redis is None:
            return None
        if is_cluster(redis) and cast(RedisCluster, redis).nodes_manager.default_node is None:
            return None
        return redis

    async def _connection(self, shard: _Shard, *, refresh: bool) -> AbstractConnection:
        redis = self._live_client()
        if redis is None:
            raise _ClientGone
        if not is_cluster(redis):
            return self._connection_class(**self._connection_kwargs)
        cluster = cast(RedisCluster, redis)
        if refresh:  # after a failover the shard's slot may have a new primary
            await cluster.nodes_manager.initialize()
        node = cluster.get_node_from_key(shard.control)
        if node is None:  # no primary for the slot yet: the caller backs off and retries
            raise StoreUnavailable(f"no node serves shard {shard.number} yet")
        kwargs = {**node.connection_kwargs, **self._connection_kwargs}
        return cast(AbstractConnection, node.connection_class(**kwargs))

    async def _read(self, shard: _Shard) -> None:
        conn: AbstractConnection | None = None
        failures = idle = 0
        try:
            while True:
                # With no waiter left, block once more on the control stream alone before
                # closing: a process that waits again soon reuses the connection.
                idle = 0 if shard.waiters else idle + 1
                if idle > 1 or self._closed:
                    break
                try:
                    if conn is None:
                        conn = await self._connection(shard, refresh=failures > 0)
                        await conn.connect()  # type: ignore[no-untyped-call]
                        if failures:
                            log.info("wait reader for shard %d reconnected", shard.number)
                            # What changed while we were away may have been trimmed or
                            # lost with the server: every waiter loads its item again.
                            self._wake_all(shard)
                            failures = 0
                            continue
                    reply = await self._block(conn, shard)
                except asyncio.CancelledError:
                    raise
                except _ClientGone:  # closed without close_hub(): fail closed, as it does
                    self._fail_all(shard)
                    break
                except Exception as exc:
                    failures += 1
                    if failures == 1:
                        log.warning("wait reader for shard %d lost Redis: %s", shard.number, exc)
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            await conn.disconnect()
                        conn = None
                    await asyncio.sleep(_backoff(failures))
                    continue
                self._deliver(shard, reply)
        finally:
            shard.reading = None
            shard.nudged = False
            shard.task = None
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.disconnect()

    async def _block(self, conn: AbstractConnection, shard: _Shard) -> Any:
        # The snapshot and the send happen with no await in between that could let a
        # waiter register unseen: one registered later sees `reading` and nudges.
        reading = {key: min(w.after for w in ws) for key, ws in shard.waiters.items()}
        shard.reading = reading
        shard.nudged = False
        names = [*reading, shard.control]
        ids = [*(f"{v}-0" for v in reading.values()), shard.control_last]
        try:
            await conn.send_command(
                "XREAD", "COUNT", COUNT, "BLOCK", BLOCK_MS, "STREAMS", *names, *ids
            )
            return await conn.read_response()
        finally:
            shard.reading = None

    def _deliver(self, shard: _Shard, reply: Any) -> None:
        if not reply:
            return
        streams = reply.items() if isinstance(reply, dict) else reply  # RESP3 or RESP2
        for key, entries in streams:
            if not entries:
                continue
            newest = entries[-1][0]
            if key == shard.control:
                shard.control_last = newest
                continue
            version = int(newest.partition("-")[0])
            ws = shard.waiters.get(key, set())
            for w in [w for w in ws if w.after < version]:
                # Dropped now, not when its task runs: the next block must not read
                # this key from the old version again and return at once.
                ws.discard(w)
                if not w.done.done():
                    w.done.set_result(None)
            if not ws:
                shard.waiters.pop(key, None)

    def _fail_all(self, shard: _Shard) -> None:
        for ws in shard.waiters.values():
            for w in ws:
                if not w.done.done():
                    w.done.set_exception(StoreUnavailable(msg.WAIT_CLOSED))
        shard.waiters.clear()

    def _wake_all(self, shard: _Shard) -> None:
        for ws in shard.waiters.values():
            for w in ws:
                if not w.done.done():
                    w.done.set_result(None)
        shard.waiters.clear()


class _ClientGone(Exception):
    """The hub's client was collected or closed: nothing left to read through."""


def _backoff(failures: int) -> float:
    base = min(BACKOFF_CAP_S, BACKOFF_FIRST_S * 2 ** (failures - 1))
    return float(base * (0.5 + random.random() / 2))  # restarts spread out, never in step


_hubs: weakref.WeakKeyDictionary[Redis, WaitHub] = weakref.WeakKeyDictionary()


def hub_for(redis: Redis) -> WaitHub:
    """The hub of this client: every store built on one client shares its readers."""
    hub = _hubs.get(redis)
    if hub is None or hub._closed:
        hub = _hubs[redis] = WaitHub(redis)
    return hub


async def close_hub(redis: Redis) -> None:
    hub = _hubs.pop(redis, None)
    if hub is not None:
        await hub.aclose()
