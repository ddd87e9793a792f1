"""A create records what a later replay and the shadow policy need, in its own script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.models import RiskTier
from bot.core.policy import parse_policy
from bot.errors import ConfigError
from bot.store import keys
from bot.store.requests import RequestStore
from bot.store.runtime import open_runtime
from tests.policy_pair import NEW, OLD, dump

old, new = parse_policy(OLD), parse_policy(NEW)


async def test_without_a_shadow_only_the_callers_raise_is_kept(
    store: RequestStore, redis: Redis
) -> None:
    plain = (await store.create(old, tool="refund", args={"amount": 5}, requester="a")).request
    raised = (
        await store.create(
            old, tool="refund", args={"amount": 5}, requester="a", risk=RiskTier.HIGH
        )
    ).request
    assert await redis.hmget(keys.request(plain.id), ["shadow", "risk_asked"]) == [None, None]
    assert await redis.hget(keys.request(raised.id), "risk_asked") == "high"
    assert raised.risk == RiskTier.HIGH


async def test_the_shadow_judges_every_create_and_is_never_enforced(
    store: RequestStore, redis: Redis
) -> None:
    store.shadow = new
    # review: none under the real policy, to a person under the shadow: still runs at once
    email = await store.create(
        old, tool="send_email", args={"to": "a@example.com"}, requester="a", claim_as="w1"
    )
    assert email.claimed
    got = json.loads(await redis.hget(keys.request(email.request.id), "shadow") or "")
    assert got == {"tier": "low", "review": True, "differs": ["review"]}
    # agreement is recorded too: the report tells "judged, agreed" from "never judged"
    deploy = (await store.create(old, tool="deploy", args={}, requester="a")).request
    got = json.loads(await redis.hget(keys.request(deploy.id), "shadow") or "")
    assert got == {"tier": "critical", "review": True, "differs": []}
    assert (await store.get(deploy.id)).state.value == "pending_review"


async def test_every_process_that_opens_the_store_judges_by_the_shadow(
    redis_url: str, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow.yaml"
    shadow.write_text(dump(NEW))
    settings = Settings(redis_url=redis_url, hitl_shadow_policy=shadow)
    async with open_runtime(settings) as rt:  # serve, the worker, the SDK in direct mode
        assert rt.requests.shadow == new
    shadow.write_text("tiers: {low: {}}\n")
    with pytest.raises(ConfigError, match=r"HITL_SHADOW_POLICY: .*shadow\.yaml: tiers\.low"):
        async with open_runtime(settings):
            pass
