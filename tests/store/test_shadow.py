"""A create records what a later replay and the shadow policy need, in its own script."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.models import RiskTier
from bot.core.policy import parse_policy
from bot.errors import ConfigError
from bot.gate.runtime import open_runtime
from bot.store import keys
from bot.store.figures import shadow
from bot.store.requests import RequestStore
from tests.support.policy_pair import NEW, OLD, dump

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
    shadow_file = tmp_path / "shadow.yaml"
    shadow_file.write_text(dump(NEW))
    settings = Settings(redis_url=redis_url, hitl_shadow_policy=shadow_file)
    async with open_runtime(settings) as rt:  # serve, the worker, the SDK in direct mode
        assert rt.requests.shadow == new
    shadow_file.write_text("tiers: {low: {}}\n")
    with pytest.raises(ConfigError, match=r"HITL_SHADOW_POLICY: .*shadow\.yaml: tiers\.low"):
        async with open_runtime(settings):
            pass


async def test_a_tool_name_cannot_forge_a_metrics_line(store: RequestStore, redis: Redis) -> None:
    store.shadow = new
    tool = 'x"} 1\nhitl_fake_total 9'  # a direct-mode caller's tool name is any text
    req = (await store.create(old, tool=tool, args={}, requester="a")).request
    incr: Counter[str] = Counter()
    await shadow.count(redis, req.id, incr)
    # unlisted: medium under both, whose review timeout the new file shortens
    assert incr == {
        "hitl_shadow_verdicts_total": 1,
        'hitl_shadow_disagreements_total{kind="timeout",tool="x\\"} 1\\nhitl_fake_total 9"}': 1,
    }
