"""A consumer group over the events streams that delivers each entry at least once,
retrying with backoff and giving up (dead-lettering) after a number of tries.

The webhooks (bot/telemetry/webhooks.py) and the trace emitter (bot/telemetry/spans.py)
read the events streams the way the metrics collector does, each through a group of its
own, so each sees every entry once whatever the Slack notifier does. An entry `handle`
did not finish stays pending; it is claimed again (by this `serve` or another: XCLAIM
with a minimum idle time is atomic, so one of them) once it has been idle for
`in_flight_ms`, longer than any try may take, so a slow try in progress is never taken
from under its `serve` and delivered twice at once. A failed try sets the entry's idle
time (XCLAIM IDLE) so it comes due the retry delay later, which doubles with each try
up to `max_backoff_ms`. After `max_attempts`
tries it is acknowledged and counted in the shard's metrics hash under `dead_metric`,
in one MULTI, so `/metrics` shows every event that was given up on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from bot.store import keys
from bot.store.stream.events import EventBus, Notice, _notice

log = logging.getLogger(__name__)

Handle = Callable[[Notice], Awaitable[bool]]  # True: done (acknowledge); False: try again


@dataclass(frozen=True)
class Retry:
    base_ms: int = 5_000  # the first retry's delay; doubles with each try
    max_backoff_ms: int = 300_000
    max_attempts: int = 8
    # longer than a try may take (a webhook's HTTP timeout is half of it): an entry
    # idle for less may still be in flight in some serve
    in_flight_ms: int = 30_000

    def delay_ms(self, tries: int) -> int:
        return int(min(self.max_backoff_ms, self.base_ms * 2 ** max(0, tries - 1)))

    def due_after_ms(self, tries: int) -> int:
        """The idle time past which an entry tried `tries` times is claimed again."""
        return max(self.in_flight_ms, self.delay_ms(tries))


class GroupReader:
    def __init__(
        self,
        redis: Redis,
        *,
        group: str,
        consumer: str,
        handle: Handle,
        retry: Retry | None = None,
        dead_metric: str,
        block_ms: int = 1_000,
        pace_ms: int = 0,
    ) -> None:
        self.redis, self.group, self.consumer = redis, group, consumer
        self.bus = EventBus(redis, group)
        self.handle, self.dead_metric = handle, dead_metric
        self.retry = retry or Retry()
        self.block_ms = block_ms
        # Nothing pending comes due sooner than the retry delay after its try, so the
        # pending lists (one XPENDING per shard) are looked at that often, not after
        # every read: with traces on, every free call's events wake this loop.
        self._scan_s = min(block_ms, self.retry.base_ms) / 1000
        self._scanned = -float("inf")
        # The least time between two reads: a reader whose work may wait (the spans)
        # takes the entries of many calls per wake, not one wake per entry beside the
        # calls themselves.
        self.pace_s = pace_ms / 1000

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until `stop` is set; run it under a Supervisor (a Redis error raises)."""
        await self.bus.ensure_group()
        while not stop.is_set():
            started = time.monotonic()
            await self._pass(self.block_ms)
            if (rest := self.pace_s - (time.monotonic() - started)) > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), rest)
                if stop.is_set():  # what came in while pacing is not left to the next serve
                    await self._pass(1)

    async def _pass(self, block_ms: int) -> None:
        """One read (and the entries due again), delivered and acknowledged."""
        try:
            batch: list[tuple[Notice, int]] = []
            if time.monotonic() - self._scanned >= self._scan_s:
                batch = await self._due()
                self._scanned = time.monotonic()
            batch += [(n, 1) for n in await self.bus.read(self.consumer, block_ms=block_ms)]
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.bus.ensure_group()  # a flushed or replaced Redis
            return
        done: dict[str, list[str]] = {}
        try:
            for n, tries in batch:
                if await self._one(n, tries):
                    done.setdefault(n.stream, []).append(n.entry_id)
        finally:
            # one XACK per stream for what the batch delivered, not one per entry (most
            # entries are no final transition and need nothing but the ack); the batch
            # already takes less than `in_flight_ms`, which covers these too
            for stream, ids in done.items():
                await self.redis.xack(stream, self.group, *ids)

    async def _one(self, n: Notice, tries: int) -> bool:
        """Try one entry; True: done, to be acknowledged with its batch."""
        try:
            done = await self.handle(n)
        except RedisError:
            raise
        except Exception:
            log.exception("%s could not deliver %s %s %s", self.group, n.kind, n.id, n.event)
            done = False
        if done:
            return True
        if tries < self.retry.max_attempts:
            # due again `delay_ms` from now, not `in_flight_ms` after the try began
            idle = self.retry.due_after_ms(tries) - self.retry.delay_ms(tries)
            await self.redis.xclaim(
                n.stream, self.group, self.consumer, 0, [n.entry_id], idle=idle, justid=True
            )
        else:
            log.error(
                "%s gave up on %s %s %s after %d tries",
                self.group,
                n.kind,
                n.id,
                n.event,
                tries,
                extra={"entry_id": n.entry_id, "group": self.group},
            )
            pipe = self.redis.pipeline(transaction=True)
            pipe.hincrby(keys.metrics(keys.shard_of_key(n.stream)), self.dead_metric, 1)
            pipe.xack(n.stream, self.group, n.entry_id)
            await pipe.execute()
        return False

    async def _due(self) -> list[tuple[Notice, int]]:
        """Pending entries whose retry delay has passed, claimed for this consumer."""
        out: list[tuple[Notice, int]] = []
        for stream in self.bus.streams:
            rows = await self.redis.xpending_range(
                stream, self.group, min="-", max="+", count=100, idle=self.retry.in_flight_ms
            )
            for row in cast(list[dict[str, Any]], rows):
                tries = int(row["times_delivered"])
                wait = self.retry.due_after_ms(tries)
                if int(row["time_since_delivered"]) < wait:
                    continue
                got = await self.redis.xclaim(
                    stream, self.group, self.consumer, wait, [row["message_id"]]
                )
                for eid, f in cast(list[tuple[str, dict[str, str] | None]], got):
                    if f is None:  # trimmed away while pending
                        await self.redis.xack(stream, self.group, eid)
                    else:
                        out.append((_notice(stream, eid, f), tries + 1))
        return out
