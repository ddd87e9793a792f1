"""The events streams are trimmed once every consumer group acknowledged their entries,
and never below what a group still needs (read but unacknowledged, or not yet read)."""

from __future__ import annotations

import itertools

from redis.asyncio import Redis

from bot.store import keys
from bot.store.figures.metrics import GROUP as METRICS_GROUP
from bot.store.stream import events
from bot.store.stream.events import NOTIFIER_GROUP, EventBus, Notice
from bot.store.stream.events_trim import EventTrimmer

SHARD = 5
STREAM = keys.events(SHARD)
N = 300  # three of the stream's 100-entry nodes: approximate trimming drops whole nodes


async def publish(redis: Redis, n: int = N, shard: int = SHARD) -> list[str]:
    """n events on one shard, as a run's or a steer's would be; their ids in order."""
    found = (i for i in (f"run{k}" for k in itertools.count()) if keys.shard_of(i) == shard)
    for k, item in zip(range(n), found, strict=False):
        await events.publish(redis, item, {"kind": "run", "id": item, "event": f"e{k}"})
    return [eid for eid, _ in await redis.xrange(keys.events(shard))]


async def read_all(bus: EventBus, consumer: str = "c1") -> list[Notice]:
    got: list[Notice] = []
    while batch := await bus.read(consumer, count=100, block_ms=1):
        got += batch
    return got


async def groups(redis: Redis) -> tuple[EventBus, EventBus]:
    slack, metrics = EventBus(redis, NOTIFIER_GROUP), EventBus(redis, METRICS_GROUP)
    await slack.ensure_group()
    await metrics.ensure_group()
    return slack, metrics


async def deliver(bus: EventBus, *, keep: frozenset[str] = frozenset()) -> list[Notice]:
    """Read everything and acknowledge it, except the entries in `keep`."""
    got = await read_all(bus)
    for n in got:
        if n.entry_id not in keep:
            await bus.ack(n)
    return got


async def test_entries_every_group_acknowledged_are_trimmed(redis: Redis) -> None:
    slack, metrics = await groups(redis)
    await publish(redis)
    assert len(await deliver(slack)) == N and len(await deliver(metrics)) == N
    assert await redis.xlen(STREAM) == N  # MAXLEN alone keeps them all

    done = await EventTrimmer(redis).trim_once()

    assert await redis.xlen(STREAM) == 0
    assert done.trimmed == N and done.failed == 0
    # The stream and its groups remain: the next event reaches both groups.
    await publish(redis, 1)
    assert len(await read_all(slack)) == 1 and len(await read_all(metrics)) == 1


async def test_an_entry_read_but_not_acknowledged_survives_and_is_delivered_again(
    redis: Redis,
) -> None:
    slack, metrics = await groups(redis)
    ids = await publish(redis)
    held = ids[150]  # Slack refused this one's post: the notifier left it pending
    await deliver(slack, keep=frozenset({held}))
    await deliver(metrics)

    await EventTrimmer(redis).trim_once()

    left = [eid for eid, _ in await redis.xrange(STREAM)]
    assert held in left
    assert ids[0] not in left  # what precedes it in whole nodes went
    # The retry gets the entry itself, not a trimmed hole that reclaim drops unseen.
    again = await slack.reclaim("c2", min_idle_ms=0)
    assert [(n.entry_id, n.fields["event"]) for n in again] == [(held, "e150")]


async def test_entries_a_second_group_has_not_read_yet_survive_for_it(redis: Redis) -> None:
    slack, metrics = await groups(redis)
    ids = await publish(redis)
    await deliver(slack)  # the notifier is done; the metrics collector has read nothing yet

    await EventTrimmer(redis).trim_once()

    assert await redis.xlen(STREAM) == N
    assert [n.entry_id for n in await deliver(metrics)] == ids


async def test_a_group_part_way_through_keeps_what_it_has_not_read(redis: Redis) -> None:
    slack, metrics = await groups(redis)
    ids = await publish(redis)
    await deliver(slack)
    for n in await metrics.read("c1", count=N // 2, block_ms=1):
        await metrics.ack(n)

    await EventTrimmer(redis).trim_once()

    left = [eid for eid, _ in await redis.xrange(STREAM)]
    assert ids[0] not in left and left[-N // 2 :] == ids[N // 2 :]
    assert [n.entry_id for n in await read_all(metrics)] == ids[N // 2 :]


async def test_a_stream_no_group_reads_yet_is_left_whole(redis: Redis) -> None:
    ids = await publish(redis)  # written before any reader existed

    done = await EventTrimmer(redis).trim_once()

    assert done.trimmed == 0 and await redis.xlen(STREAM) == N
    # The first group, created from id 0, still gets every one of them.
    slack, _ = await groups(redis)
    assert [n.entry_id for n in await read_all(slack)] == ids


async def test_a_stream_serves_notifier_group_is_not_on_yet_is_left_whole(redis: Redis) -> None:
    # The metrics group was made and read everything; the notifier's is not made yet
    # (its XGROUP CREATE failed and waits out a backoff). Its card must still be posted.
    metrics = EventBus(redis, METRICS_GROUP)
    await metrics.ensure_group()
    ids = await publish(redis)
    await deliver(metrics)
    trimmer = EventTrimmer(redis, expected=(NOTIFIER_GROUP, METRICS_GROUP))

    done = await trimmer.trim_once()

    assert done.trimmed == 0 and await redis.xlen(STREAM) == N
    slack = EventBus(redis, NOTIFIER_GROUP)
    await slack.ensure_group()
    assert [n.entry_id for n in await deliver(slack)] == ids
    await trimmer.trim_once()
    assert await redis.xlen(STREAM) == 0


async def test_a_stream_that_fails_is_left_alone_and_the_others_are_trimmed(
    redis: Redis,
) -> None:
    other = (SHARD + 1) % keys.SHARDS
    await redis.delete(keys.events(other))
    slack, metrics = await groups(redis)
    await publish(redis)
    await deliver(slack)
    await deliver(metrics)
    await redis.delete(keys.events(other))
    await redis.set(keys.events(other), "not a stream")  # WRONGTYPE for every stream command
    try:
        done = await EventTrimmer(redis).trim_once()

        assert done.failed == 1 and done.trimmed == N
        assert await redis.xlen(STREAM) == 0
        assert await redis.get(keys.events(other)) == "not a stream"
    finally:
        # Tests that share the server without the flushing fixture (the Lua/machine
        # property) would meet this string where their shard's stream belongs.
        await redis.delete(keys.events(other))
