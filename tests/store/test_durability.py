"""An external Redis that could lose acknowledged approvals is named at start."""

from __future__ import annotations

import logging

import pytest
from redis.asyncio import Redis

from bot.config import Settings
from bot.db.connection import connect
from bot.db.durability import warn_if_unsafe


async def test_appendonly_off_and_an_evicting_policy_are_each_named_with_the_fix(
    redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    await redis.config_set("appendonly", "no")
    await redis.config_set("maxmemory-policy", "allkeys-lru")
    try:
        with caplog.at_level(logging.WARNING, logger="bot.db.durability"):
            found = await warn_if_unsafe(redis)
        assert len(found) == 2
        assert "appendonly is 'no'" in found[0] and "CONFIG SET appendonly yes" in found[0]
        assert "maxmemory-policy is 'allkeys-lru'" in found[1] and "noeviction" in found[1]
        assert [r.getMessage() for r in caplog.records] == found
    finally:
        await redis.config_set("maxmemory-policy", "noeviction")


async def test_a_durable_server_gets_no_warning(redis: Redis) -> None:
    await redis.config_set("appendonly", "yes")
    await redis.config_set("maxmemory-policy", "noeviction")
    try:
        assert await warn_if_unsafe(redis) == []
    finally:
        await redis.config_set("appendonly", "no")


async def test_config_refused_by_a_managed_redis_is_one_warning_that_it_was_not_checked(
    redis_url: str, redis: Redis
) -> None:
    # Managed services refuse CONFIG; an ACL user without it is the same refusal.
    await redis.acl_setuser(
        "app", enabled=True, passwords=["+app-pass-1"], keys=["*"], commands=["+@all", "-config"]
    )
    limited = Redis.from_url(redis_url, username="app", password="app-pass-1")
    try:
        found = await warn_if_unsafe(limited)
    finally:
        await limited.aclose()
        await redis.acl_deluser("app")
    assert len(found) == 1 and "Could not read the Redis settings" in found[0]


async def test_connecting_to_an_external_server_checks_it(
    redis_url: str, redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    await redis.config_set("appendonly", "no")
    with caplog.at_level(logging.WARNING, logger="bot.db.durability"):
        client, server = await connect(Settings(redis_url=redis_url))
        await client.aclose()
    assert server is None
    assert any("appendonly is 'no'" in r.getMessage() for r in caplog.records)
