"""The last level's pager webhook gets its documented body, retried through the outbox;
a notice of an item the store no longer has is dropped."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import Level
from bot.core.policy import Policy
from bot.slack.delivery.notifier import Notifier
from bot.store.requests import RequestStore
from bot.store.run.runs import RunStore
from bot.store.stores import StoreSet
from bot.store.stream.events import publish


def _notifier(redis: Redis, handler: Any) -> Notifier:
    rt = StoreSet(redis)
    pager = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Notifier(rt, RunStore(redis), AsyncWebClient(token="x"), consumer="t", pager=pager)


async def test_the_generic_webhook_gets_its_documented_body_once(
    redis: Redis, store: RequestStore, policy: Policy
) -> None:
    req = (await store.create(policy, tool="deploy", args={"v": 1}, requester="U1")).request
    hooked = Level(timeout_ms=60_000, pager_url="https://pager.test/hook")
    req = req.model_copy(update={"levels": (*req.levels, hooked), "level": len(req.levels)})
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(500 if len(seen) < 2 else 200)

    paging = _notifier(redis, handler).escalations.paging
    with pytest.raises(httpx.HTTPError):  # the outbox retries the notice
        await paging.trigger(req)
    await paging.trigger(req)
    await paging.trigger(req)  # taken: not sent again
    assert len(seen) == 2
    assert seen[-1] == {
        "request_id": req.id,
        "tool": "deploy",
        "risk": "critical",
        "level": len(req.levels),
        "expires_at": req.expires_at,
    }


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
