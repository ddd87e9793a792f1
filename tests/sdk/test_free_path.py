"""A free call (`review: none`) through the decorator: two script calls, the full trail."""

from __future__ import annotations

from typing import cast

import pytest
from redis.asyncio import Redis

from bot.core.policy import Policy
from bot.errors import PayloadError
from bot.sdk import require_approval
from bot.store import audit
from bot.store.requests import RequestStore
from tests.sdk.conftest import direct_gate


async def commands_for(redis: Redis, call: object) -> dict[str, int]:
    await redis.config_resetstat()
    await call  # type: ignore[misc]
    stats = cast(dict[str, dict[str, int]], await redis.info("commandstats"))
    return {k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()}


async def test_a_free_call_costs_two_script_calls_and_keeps_the_trail(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    gate = direct_gate(redis_url, policy)
    moved: list[str] = []

    @require_approval(gate)
    async def move_claw(dir: str) -> str:
        moved.append(dir)
        return f"moved {dir}"

    try:
        assert await move_claw("left") == "moved left"  # opens the store, records the schema
        ran = await commands_for(redis, move_claw("right"))
    finally:
        await gate.aclose()

    assert moved == ["left", "right"]
    # create-and-claim, then succeed; the one HGETALL is the succeed script's own read
    assert ran.get("evalsha") == 2 and ran.get("hgetall") == 1
    ids = await RequestStore(redis).ids_between()
    for rid in ids:
        trail = await audit.entries(redis, rid)
        assert [(e.event, e.to_state, e.actor) for e in trail] == [
            ("create", "pending_review", "agent-7"),
            ("approve", "approved", "system"),
            ("claim", "executing", "agent-7"),
            ("succeed", "completed", "agent-7"),
        ]
        assert await audit.verify_request(redis, rid) is None


async def test_fields_checked_once_are_checked_again_when_they_change(
    redis: Redis, redis_url: str, policy: Policy
) -> None:
    """The gate checks a decorated function's fixed fields once; a schema changed in
    place after that, or a bad field on a later call, is still refused."""
    gate = direct_gate(redis_url, policy)
    schema = {"type": "object", "properties": {"dir": {"type": "string"}}}
    moved: list[str] = []

    @require_approval(gate, args_schema=schema)
    async def move_claw(dir: str) -> str:
        moved.append(dir)
        return dir

    try:
        assert await move_claw("left") == "left"
        schema["type"] = "array"  # the caller's dict, changed after its first use
        with pytest.raises(PayloadError, match="object"):
            await move_claw("right")
        with pytest.raises(PayloadError, match="tool"):
            await gate.submit("rm -rf /", {})  # a new set of fields is checked
        with pytest.raises(PayloadError, match="run_id"):
            await gate.submit("move_claw", {}, run_id=["not", "a", "string"])  # type: ignore[arg-type]
    finally:
        await gate.aclose()
    assert moved == ["left"]
