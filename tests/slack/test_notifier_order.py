"""A run's thread shows things in the order they happened, even across shards."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.notifier import Notifier
from bot.store.events import Notice
from bot.store.runs import RunStore


class Recording(Notifier):
    def __init__(self, redis: Redis) -> None:
        rt: Any = SimpleNamespace(redis=redis)
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


async def test_a_redis_error_while_handling_is_retried_not_fatal(redis: Redis) -> None:
    from redis.exceptions import ConnectionError as RedisConnectionError

    class Flaky(Recording):
        async def handle(self, n: Notice) -> None:
            raise RedisConnectionError("Redis went away")

    flaky = Flaky(redis)
    delivered = await flaky.deliver(notice("1-0", "s01", "x", "runA"))
    assert delivered is False and flaky.failures == 1  # left pending for a retry
