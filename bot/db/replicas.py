"""Replica-acknowledged transitions: with HITL_REPLICA_ACKS=N, a step a person or an
executor is told about is acknowledged only once N replicas hold it.

Redis and Valkey replicate asynchronously: a primary lost in the milliseconds after a
write may take the write with it, and the replica promoted in its place never saw it.
For an approval bot that window undoes an Approve the card already showed, or a claim,
so that a second executor runs the call again. `WAIT N T` blocks until N replicas
acknowledged every write its connection made, so the script and WAIT travel down one
connection, pipelined: one round trip, plus however long the replicas take.

The pipeline also writes a marker in the script's slot. A step that wrote nothing (a
person's repeated click, an executor's retried claim) must not be told "saved" on the
strength of an earlier write that may still be on its way: replication keeps order, so
the marker acknowledged means everything the primary wrote before it is too. (WAITAOF
is not used: it also needs every replica to keep an append-only file.)

On a cluster the cluster client hands each command any pooled connection, so the three
commands go to the slot's primary through that node's own pipeline; a slot that moved
answers MOVED, which the cluster client learns from on the next keyed read, and the
caller is told to try again.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections import Counter
from typing import Any, cast

import redis.asyncio
from redis.asyncio.cluster import ClusterNode, PipelineCommand
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError, NoScriptError, RedisError, TimeoutError

from bot.db.cluster import is_cluster
from bot.db.slots import replica_mark
from bot.errors import NotReplicated

log = logging.getLogger(__name__)

MARK_TTL_MS = 60_000  # the marker only has to outlive the WAIT that follows it
# This process's confirmations, by outcome: `confirmed` or `timeout` (/metrics).
COUNTS: Counter[str] = Counter()
NOT_SAVED = (
    "Not yet saved: {got} of {want} Redis replicas confirmed the write within {ms} ms, "
    "so a failover could still undo it. Try again."
)
# What a script answers when it wrote what the caller is told about, or had it already
# (a repeated decision or claim, a create found again by its idempotency key).
TOLD = frozenset({"ok", "repeat", "exists"})


class ReplicaAcks:
    """How this client's transitions are acknowledged: `n` replicas within `timeout_ms`
    (n = 0: once the primary applied them, one plain EVALSHA)."""

    def __init__(self, client: redis.asyncio.Redis, n: int = 0, timeout_ms: int = 1000) -> None:
        self.client = client
        self.n = n
        self.timeout_ms = timeout_ms

    async def script(
        self,
        script: AsyncScript,
        *,
        keys: list[str],
        args: list[Any],
        told: bool = True,
        strict: bool = True,
    ) -> Any:
        """Run `script`; with n > 0, raise NotReplicated unless n replicas hold what it
        answered. `told`: whether the caller tells anyone the outcome (a status in TOLD);
        a refusal is answered as it is (nothing was written that a person relies on).
        `strict` False (the sweeper's defaults, which nobody waits on): a timeout is
        counted and logged, not raised; the card waits for the replicas itself."""
        if self.n == 0:
            return await script(keys=keys, args=args)
        for attempt in range(2):
            reply, acked = await self._pipelined(script, keys, args)
            if isinstance(reply, NoScriptError) and attempt == 0:
                await self._load(script, keys[0])
                continue
            if isinstance(reply, BaseException):
                raise reply
            status = reply[0] if isinstance(reply, list) and reply else None
            if told and status in TOLD:
                self._check(acked, strict=strict)
            return reply
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def confirm(self, key: str) -> None:
        """Raise NotReplicated unless n replicas hold everything the primary of `key`'s
        slot wrote so far (a marker written now, then WAIT: replication keeps order)."""
        if self.n == 0:
            return
        acked = (await self._send(key, self._commands(None, [key], [])))[-1]
        self._check(acked, strict=True)

    def _check(self, acked: object, *, strict: bool) -> None:
        if isinstance(acked, BaseException):
            raise acked
        got = int(cast(int, acked))
        if got >= self.n:
            COUNTS["confirmed"] += 1
            return
        COUNTS["timeout"] += 1
        log.warning(
            "replicas did not confirm a transition",
            extra={"wanted": self.n, "confirmed": got, "timeout_ms": self.timeout_ms},
        )
        if strict:
            raise NotReplicated(NOT_SAVED.format(got=got, want=self.n, ms=self.timeout_ms))

    def _commands(
        self, script: AsyncScript | None, keys_: list[str], args: list[Any]
    ) -> list[tuple[Any, ...]]:
        """[EVALSHA,] the marker, WAIT: all in the slot of `keys_[0]`."""
        run = [] if script is None else [("EVALSHA", script.sha, len(keys_), *keys_, *args)]
        return [
            *run,
            ("SET", replica_mark(keys_[0]), "1", "PX", MARK_TTL_MS),
            ("WAIT", self.n, self.timeout_ms),
        ]

    async def _pipelined(
        self, script: AsyncScript, keys_: list[str], args: list[Any]
    ) -> tuple[Any, Any]:
        """The script's reply and WAIT's, from one round trip on one connection."""
        got = await self._send(keys_[0], self._commands(script, keys_, args))
        reply = got[0]
        moved = isinstance(reply, RedisError) and not isinstance(reply, NoScriptError)
        if moved and is_cluster(self.client):  # MOVED, CLUSTERDOWN...: the slot went
            await self._relearn(keys_[0])
        return reply, got[-1]

    async def _send(self, key: str, commands: list[tuple[Any, ...]]) -> list[Any]:
        """`commands` pipelined on one connection to the primary of `key`'s slot: each
        one's reply, an error in its place where it failed."""
        if not is_cluster(self.client):
            pipe = self.client.pipeline(transaction=False)
            for c in commands:
                pipe.execute_command(*c)
            return list(await pipe.execute(raise_on_error=False))
        batch = [PipelineCommand(i, *c) for i, c in enumerate(commands)]
        try:
            await self._node(key).execute_pipeline(batch)
        except (ConnectionError, TimeoutError):
            await self._relearn(key)
            raise
        return [c.result for c in batch]

    async def _relearn(self, key: str) -> None:
        """The slot's primary is gone or moved (a failover): let the cluster client learn
        where it went (it follows redirects and reloads the slots on a keyed read), so
        the caller's retry reaches the new primary."""
        with contextlib.suppress(RedisError):
            await self.client.exists(key)

    def _node(self, key: str) -> ClusterNode:
        cluster = cast(redis.asyncio.RedisCluster, self.client)
        node = cluster.get_node_from_key(key)
        if node is None:  # no primary for the slot yet: a failover is under way
            raise NotReplicated(NOT_SAVED.format(got=0, want=self.n, ms=self.timeout_ms))
        return node

    async def _load(self, script: AsyncScript, key: str) -> None:
        if is_cluster(self.client):
            await self._node(key).execute_command("SCRIPT", "LOAD", script.script)
        else:
            await self.client.script_load(script.script)


_configured: weakref.WeakKeyDictionary[redis.asyncio.Redis, tuple[int, int]] = (
    weakref.WeakKeyDictionary()
)


def configure(client: redis.asyncio.Redis, n: int, timeout_ms: int) -> None:
    """Every store built on `client` from now on acknowledges with `n` replicas (connect()
    calls this from the settings)."""
    _configured[client] = (n, timeout_ms)


def acks_for(client: redis.asyncio.Redis) -> ReplicaAcks:
    n, timeout_ms = _configured.get(client, (0, 1000))
    return ReplicaAcks(client, n, timeout_ms)
