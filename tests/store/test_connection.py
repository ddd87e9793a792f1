"""connect(): REDIS_URL when set, the embedded Valkey when not; failures name a fix."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import HOW_TO_SET, Settings
from bot.db.cluster import fails_over
from bot.db.connection import connect, redact_url
from bot.db.valkey.embedded import EmbeddedServer, ensure_server
from bot.errors import ConfigError, StoreUnavailable
from tests.support.clients import CLUSTER
from tests.support.poll import eventually


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # REDIS_URL may be set for the rest of the suite; these tests choose their own.
    for name in HOW_TO_SET:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hv", dir="/tmp")).resolve()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def settings(data_dir: Path, redis_url: str | None = None) -> Settings:
    return Settings(
        redis_url=SecretStr(redis_url) if redis_url else None,
        hitl_data_dir=data_dir,
    )


async def test_unset_redis_url_uses_the_embedded_server(data_dir: Path) -> None:
    client, server = await connect(settings(data_dir))
    try:
        assert server is not None
        assert server.owned
        await client.set("hitl:x", "1")
        assert await client.get("hitl:x") == "1"  # decode_responses
    finally:
        await client.aclose()
        if server is not None:
            server.stop()


async def test_redis_url_is_used_as_given(data_dir: Path) -> None:
    embedded: EmbeddedServer = ensure_server(data_dir)
    try:
        client, server = await connect(settings(data_dir, embedded.url))
        try:
            assert server is None
            assert await client.ping()
        finally:
            await client.aclose()
    finally:
        embedded.stop()


def test_replies_are_parsed_by_hiredis() -> None:
    # hiredis is a dependency for the client CPU it saves, but redis-py falls back to
    # its Python parser without a word when it finds one it does not support (6.2 and
    # later: below 3.2), so an old hiredis inside pyproject's range would be dead weight.
    from redis._parsers import _AsyncHiredisParser
    from redis.asyncio.connection import DefaultParser

    assert DefaultParser is _AsyncHiredisParser


async def test_unreachable_redis_names_the_url_but_not_the_password(data_dir: Path) -> None:
    with pytest.raises(StoreUnavailable) as caught:
        await connect(settings(data_dir, "redis://bot:hunter2@127.0.0.1:1/0"))

    message = str(caught.value)
    assert "redis://bot:***@127.0.0.1:1/0" in message
    assert "hunter2" not in message
    assert "fix:" in message


async def test_url_with_an_unknown_scheme_is_a_config_error(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="REDIS_URL"):
        await connect(settings(data_dir, "http://127.0.0.1:6379"))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://localhost:6379/0", "redis://localhost:6379/0"),
        ("redis://:s3cret@host:6379", "redis://:***@host:6379"),
        ("rediss://user:s3cret@host/1", "rediss://user:***@host/1"),
        ("redis://user:p%40ss@host", "redis://user:***@host"),
        ("unix:///tmp/v.sock?password=s3cret&db=2", "unix:///tmp/v.sock?password=***&db=2"),
        (
            "redis+sentinel://:s3cret@h1,h2:26380/mymaster?sentinel_password=w4tch",
            "redis+sentinel://:***@h1,h2:26380/mymaster?sentinel_password=***",
        ),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


async def test_a_full_pool_makes_a_command_wait_not_fail(data_dir: Path, redis_url: str) -> None:
    """HITL_REDIS_MAX_CONNECTIONS=2, both connections busy: a third command queues for
    one instead of failing with "Too many connections"."""
    capped = Settings(redis_url=SecretStr(redis_url), hitl_redis_max_connections=2)
    client, _ = await connect(capped)
    try:
        busy = [
            asyncio.create_task(client.blpop([f"hitl:test:none:{i}"], timeout=1)) for i in (1, 2)
        ]
        await eventually(
            lambda: len(client.connection_pool._in_use_connections) >= 2,
            what="both connections busy",
        )
        assert await client.ping()
        assert any(b.done() for b in busy)  # it waited for a connection to come back
        assert await asyncio.gather(*busy) == [None, None]
    finally:
        await client.aclose()


async def test_only_a_cluster_or_sentinel_fails_over(redis: Redis) -> None:
    """Startup steps are retried only where the store passes over a lost primary (the
    Sentinel case: tests/sentinel)."""
    assert fails_over(redis) == CLUSTER
