"""Trims each shard's events stream once every consumer group is done with its entries.

The events stream (bot/store/stream/events.py) is an outbox: the Slack notifier and the
metrics collector each read it through a consumer group and acknowledge an entry
once they have delivered or counted it. After that nobody reads the entry again,
yet `XADD ... MAXLEN ~ 100000` alone would keep up to 100,000 of them per shard:
about 67 B per pending request, the stream's share in bench/memory_per_request.py.

So `serve` trims each stream every few seconds up to the lowest id any group may
still need: for each group the smaller of its oldest pending entry (read but not
acknowledged: XAUTOCLAIM delivers it again, so it must stay) and the entry after
the last one it was given. Everything below that is acknowledged by every group.

It fails closed. A stream keeps everything while any group `serve` reads with
(`expected`) is missing from it, or it has no group at all: groups are created
from id 0, so events written before a reader's group exists still count (were
the metrics group there alone, its acknowledgements must not drop what the
notifier, its group not yet made, has to post). An error on a
stream (gone, of another type, Redis down) leaves that stream as it is for this
pass. One stream is one key and each command names one, so this runs unchanged
on Redis Cluster. Several `serve` processes may trim at once: each only removes
what every group has acknowledged. `XTRIM MINID ~` removes whole stream nodes
only, so it may keep a few acknowledged entries, never drop a needed one; and at
most 10,000 entries a call (its default LIMIT), so a large backlog (serve was down
a while) goes over a few passes, none holding the server long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from bot.store import keys

log = logging.getLogger(__name__)

INTERVAL_S = 5.0  # how often `serve` trims: cheap (a few commands per stream)
_SEQ_MAX = 2**64 - 1


def _parse(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _after(entry_id: str) -> tuple[int, int]:
    """The id right after `entry_id`: the first one a group has not been given."""
    ms, seq = _parse(entry_id)
    return (ms + 1, 0) if seq == _SEQ_MAX else (ms, seq + 1)


async def needed_from(redis: Redis, stream: str, expected: Collection[str] = ()) -> str | None:
    """The lowest id some consumer group on `stream` may still read; None: keep all
    (no group, or one of `expected` not there yet).

    Read in this order: a group's last-delivered id first, then its pending list,
    so an entry delivered in between is above the first and one acknowledged in
    between is no longer needed."""
    groups = await redis.xinfo_groups(stream)
    if not set(expected) <= {str(g["name"]) for g in groups}:
        return None
    lowest: tuple[int, int] | None = None
    for group in groups:
        floor = _after(str(group["last-delivered-id"]))
        if int(group["pending"]) > 0:
            summary = await redis.xpending(stream, group["name"])
            if int(summary["pending"]) > 0 and summary["min"] is not None:
                floor = min(floor, _parse(str(summary["min"])))
        lowest = floor if lowest is None else min(lowest, floor)
    return None if lowest is None else f"{lowest[0]}-{lowest[1]}"


@dataclass
class TrimPass:
    trimmed: int = 0  # entries removed over every stream
    failed: int = 0  # streams left alone because a step failed


class EventTrimmer:
    def __init__(self, redis: Redis, expected: Collection[str] = ()) -> None:
        self.redis = redis
        self.expected = tuple(expected)  # the groups serve reads with: none missing
        self.streams = [keys.events(s) for s in range(keys.SHARDS)]
        self._failing = False

    async def trim_stream(self, stream: str, done: TrimPass) -> None:
        try:
            minid = await needed_from(self.redis, stream, self.expected)
            if minid is not None:
                # awaited before the +=: the shards run concurrently on one TrimPass
                got = await self.redis.xtrim(stream, minid=minid, approximate=True)
                done.trimmed += int(got)
        except ResponseError as exc:
            if "no such key" in str(exc):
                return  # before the first event or group: nothing to trim yet
            done.failed += 1
            log.debug("not trimming %s this pass: %s", stream, exc)
        except (RedisError, OSError, KeyError, ValueError) as exc:
            done.failed += 1
            log.debug("not trimming %s this pass: %s", stream, exc)

    async def trim_once(self) -> TrimPass:
        """Trim every shard's stream once; never raises for a stream's error."""
        done = TrimPass()
        await asyncio.gather(*(self.trim_stream(s, done) for s in self.streams))
        return done

    async def run(self, stop: asyncio.Event, interval_s: float = INTERVAL_S) -> None:
        """Trim every `interval_s` until `stop` is set. Errors never end the loop: an
        outage is logged once as it starts (the other tasks report it too)."""
        while not stop.is_set():
            done = await self.trim_once()
            failing = done.failed == len(self.streams)
            if failing and not self._failing:
                log.warning("trimming the events streams failed on every shard; retrying")
            self._failing = failing
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)
