"""The last level's pager webhook is called with retries, and a dead pager is retried later;
a notice of an item the store no longer has is dropped."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.policy import Policy
from bot.slack.notifier import Notifier
from bot.store.events import publish
from bot.store.requests import RequestStore
from bot.store.runs import RunStore
from bot.store.stores import StoreSet


def _notifier(redis: Redis, handler: Any) -> Notifier:
    rt = StoreSet(redis)
    pager = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Notifier(rt, RunStore(redis), AsyncWebClient(token="x"), consumer="t", pager=pager)


async def test_pager_is_retried_until_it_answers(
    redis: Redis, store: RequestStore, policy: Policy
) -> None:
    req = (await store.create(policy, tool="deploy", args={"v": 1}, requester="U1")).request
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(500 if len(seen) < 3 else 200)

    await _notifier(redis, handler).escalations.page("https://pager.test/hook", req)
    assert len(seen) == 3 and seen[-1]["request_id"] == req.id and seen[-1]["risk"] == "critical"


async def test_a_pager_that_stays_down_raises_so_the_event_is_retried(
    redis: Redis, store: RequestStore, policy: Policy
) -> None:
    req = (await store.create(policy, tool="deploy", args={"v": 2}, requester="U1")).request
    with pytest.raises(httpx.HTTPError):
        await _notifier(redis, lambda r: httpx.Response(503)).escalations.page(
            "https://pager.test/x", req
        )


async def test_a_notice_of_an_item_the_store_lost_is_dropped_not_retried_forever(
    redis: Redis,
) -> None:
    """A failover can lose a run before a replica had it while its notice survives on
    another shard: the notice is acknowledged and dropped, so its lane is not held."""
    notifier = _notifier(redis, lambda r: httpx.Response(200))
    await notifier.bus.ensure_group()
    await publish(redis, "run-gone", {"kind": "run", "id": "run-gone", "event": "start"})
    (notice,) = await notifier.bus.read("t", block_ms=100)
    assert await notifier.deliver(notice)
    assert await notifier.bus.backlog() == 0
