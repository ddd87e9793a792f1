"""REDIS_URL=redis+sentinel://...: the bot finds the primary through the sentinels."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db.cluster import fails_over
from bot.db.connection import connect, redact_url
from bot.db.hub import hub_for
from bot.db.sentinel import SentinelUrl, parse
from bot.errors import ConfigError, StoreUnavailable
from bot.store.requests import RequestStore
from tests.support.localsentinel import PASSWORD, SENTINEL_PASSWORD, LocalSentinel
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(180)  # the module's sentinels start with the first test


async def test_a_sentinel_url_gives_a_client_of_the_primary(
    sentinel: LocalSentinel, client: Redis
) -> None:
    await client.set("hitl:test:x", "1")
    assert await client.get("hitl:test:x") == "1"  # decode_responses, as the plain path
    info = await client.info("replication")
    assert info["role"] == "master"
    assert (await client.info("server"))["tcp_port"] == sentinel.primary().port
    pool = client.connection_pool
    assert pool.max_connections == Settings().hitl_redis_max_connections
    # A primary's loss is waited out at start (consumer groups), as on a cluster.
    assert fails_over(client)


async def test_a_full_pool_makes_a_command_wait_not_fail(sentinel: LocalSentinel) -> None:
    """As the plain path's: two connections, both busy, a third command queues."""
    capped = Settings(redis_url=SecretStr(sentinel.url), hitl_redis_max_connections=2)
    client, _ = await connect(capped)
    try:
        busy = [
            asyncio.create_task(client.blpop([f"hitl:test:none:{i}"], timeout=1)) for i in (1, 2)
        ]
        await eventually(
            lambda: len(client.connection_pool._in_use_connections) >= 2,
            what="both connections busy",
            timeout_s=30,
        )
        assert await client.ping()
        assert any(b.done() for b in busy)  # it waited for a connection to come back
        assert await asyncio.gather(*busy) == [None, None]
    finally:
        await client.aclose()


async def test_a_waiter_is_woken_through_the_sentinel_client(client: Redis, policy: Policy) -> None:
    """The wait hub opens its own connections from the pool's class: through the
    sentinels too, so it reads the primary's streams."""
    store = RequestStore(client)
    req = (await store.create(policy, tool="refund", args={"amount": 1}, requester="U1")).request
    waiting = asyncio.create_task(store.wait(req.id, timeout_s=3600))
    await eventually(lambda: hub_for(client).waiting >= 1, what="the waiter held", timeout_s=30)
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    assert (await asyncio.wait_for(waiting, 60)).state == State.APPROVED


async def test_without_the_sentinel_password_the_store_is_unavailable(
    sentinel: LocalSentinel,
) -> None:
    url = sentinel.url_without_sentinel_password
    with pytest.raises(StoreUnavailable) as caught:
        await connect(Settings(redis_url=SecretStr(url)))
    message = str(caught.value)
    assert "mymaster" in message and "fix:" in message
    assert PASSWORD not in message


async def test_a_wrong_data_password_is_named_without_the_passwords(
    sentinel: LocalSentinel,
) -> None:
    url = sentinel.url.replace(f":{PASSWORD}@", ":wrong-one@")
    with pytest.raises(StoreUnavailable) as caught:
        await connect(Settings(redis_url=SecretStr(url)))
    message = str(caught.value)
    assert "wrong-one" not in message and SENTINEL_PASSWORD not in message
    assert "redis+sentinel://:***@127.0.0.1:" in message


async def test_an_unknown_service_is_unavailable(sentinel: LocalSentinel) -> None:
    url = sentinel.url.replace("/mymaster/", "/nosuch/")
    with pytest.raises(StoreUnavailable, match="nosuch"):
        await connect(Settings(redis_url=SecretStr(url)))


def test_redact_url_hides_both_passwords() -> None:
    url = "redis+sentinel://bot:d%40ta@h1:26379,h2/mymaster/2?sentinel_password=w4tch"
    shown = "redis+sentinel://bot:***@h1:26379,h2/mymaster/2?sentinel_password=***"
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("redis+sentinel://:pw@h1:26379,h2:26379", "no service name"),
        ("redis+sentinel://:pw@h1:26379/", "no service name"),
        ("redis+sentinel://:pw@h1:26379/mymaster/zero", "not a number"),
        ("redis+sentinel://:pw@h1:26379/mymaster/0/1", "/SERVICE/DB"),
        ("redis+sentinel://:pw@h1:26379,,h2/mymaster", "host is missing"),
        ("redis+sentinel://:pw@h1:port/mymaster", "bad port"),
        ("redis+sentinel://:pw@/mymaster", "host is missing"),
        ("redis+sentinel://:pw@h1/mymaster?password=x", "unknown parameter"),
    ],
)
async def test_a_bad_sentinel_url_is_a_config_error(url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        await connect(Settings(redis_url=SecretStr(url)))
    message = str(caught.value)
    assert problem in message
    assert "REDIS_URL" in message and "redis+sentinel://" in message and "fix:" in message
    assert ":pw@" not in message


def test_parse_reads_every_part() -> None:
    url = (
        "rediss+sentinel://bot:p%40ss@[::1]:26380,s2,10.0.0.3:26381/cache%2Fa/3?sentinel_password=w"
    )
    assert parse(url) == SentinelUrl(
        sentinels=[("::1", 26380), ("s2", 26379), ("10.0.0.3", 26381)],
        service="cache/a",
        db=3,
        username="bot",
        password="p@ss",
        sentinel_password="w",
        tls=True,
    )
    plain = parse("redis+sentinel://:pw@h1/mymaster")
    assert (plain.db, plain.username, plain.password, plain.tls) == (0, None, "pw", False)
    assert plain.sentinel_password is None
