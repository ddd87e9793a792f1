"""A run's thread shows things in the order they happened, even across shards."""

from __future__ import annotations

import asyncio
import random

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.notifier import Notifier
from bot.store.run.runs import RunStore
from bot.store.stores import StoreSet
from bot.store.stream.events import Notice, publish
from tests.support.poll import eventually


class Recording(Notifier):
    def __init__(self, redis: Redis) -> None:
        rt = StoreSet(redis)
        super().__init__(rt, RunStore(redis), AsyncWebClient(token="x"), consumer="t")
        self.seen: list[str] = []

    async def handle(self, n: Notice) -> None:
        await asyncio.sleep(random.random() / 100)  # Slack answers at its own pace
        self.seen.append(n.id)


def notice(entry_id: str, stream: str, item: str, run: str) -> Notice:
    return Notice(stream, entry_id, "request", item, "create", "pending_review", 1, {"run": run})


async def test_one_runs_items_are_delivered_in_time_order(redis: Redis) -> None:
    # One read returns the shards' streams one after another, not in time order.
    batch = [
        notice("1000-0", "s01", "move-1", "runA"),
        notice("1003-0", "s01", "drop", "runA"),
        notice("1001-0", "s07", "question", "runA"),
        notice("1002-0", "s07", "other-run", "runB"),
        notice("1000-5", "s09", "move-2", "runA"),
    ]
    rec = Recording(redis)
    await rec._deliver_all(batch)
    run_a = [i for i in rec.seen if i != "other-run"]
    assert run_a == ["move-1", "move-2", "question", "drop"]
    assert "other-run" in rec.seen


async def test_a_redis_error_while_handling_is_retried_from_the_stream_not_fatal(
    redis: Redis,
) -> None:
    # Only Slack is stubbed: the entry goes through the real stream, consumer group,
    # reclaim and acknowledgement, as it does in the running bot.
    class FlakyOnce(Notifier):
        def __init__(self) -> None:
            rt = StoreSet(redis)
            client = AsyncWebClient(token="x")
            super().__init__(rt, RunStore(redis), client, consumer="t", retry_idle_ms=1)
            self.tries = 0

        async def handle(self, n: Notice) -> None:
            self.tries += 1
            if self.tries == 1:
                raise RedisConnectionError("Redis went away")

    flaky = FlakyOnce()
    await flaky.bus.ensure_group()
    await publish(redis, "x", {"kind": "request", "id": "x", "event": "create", "version": 1})
    stop = asyncio.Event()
    loop = asyncio.create_task(flaky.run(stop))
    try:

        async def delivered_once() -> bool:
            return flaky.delivered == 1 and await flaky.bus.backlog() == 0

        await eventually(delivered_once)
    finally:
        stop.set()
        await loop
    assert (flaky.tries, flaky.failures, flaky.delivered) == (2, 1, 1)
    assert loop.exception() is None
