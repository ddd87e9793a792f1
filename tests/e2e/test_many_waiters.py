"""Hundreds of waiters on a pool of ten: clicks, creates and /healthz still get through.

The bot runs with HITL_REDIS_MAX_CONNECTIONS=10 and so does a direct-mode SDK
gate in the same process. 200 long-polls and 100 SDK waiters are held open;
meanwhile /healthz is probed, a request is created, and a person clicks Approve
on every card. Before the wait hub, each waiter held a pooled connection of
its own: the pool ran dry and everything else failed with "Too many connections".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from bot.config import Settings
from bot.core.models import ActionRequest
from bot.core.policy import parse_policy
from bot.core.states import State
from bot.sdk import Gate
from bot.slack.blocks import render
from tests.e2e.conftest import POLICY, Bot
from tests.support.poll import eventually

POOL = 10
REQUESTS, POLLS_EACH, SDK_EACH = 20, 10, 5
API = {"Authorization": "Bearer api-token-0123456789"}


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_redis_max_connections": POOL}


async def _served_waiters(api: httpx.AsyncClient) -> int:
    text = (await api.get("/metrics")).text
    return int(next(ln for ln in text.splitlines() if ln.startswith("hitl_waiters ")).split()[1])


async def _until(probe: Callable[[], Awaitable[int]], want: int) -> None:
    """Until `probe()` counts `want` waiters: hundreds of them take a while on a busy machine."""
    await eventually(probe, lambda n: n == want, what=f"{want} waiters", timeout_s=60)


async def test_waiters_leave_room_for_clicks_creates_and_health(
    bot: Bot, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    # the API token's own requests ("api"): its long-polls may wait on them
    rids = [
        await bot.propose("refund", {"amount": 10 + i, "to": f"c{i}"}, requester="api")
        for i in range(REQUESTS)
    ]

    cards = [await bot.message_of(rid) for rid in rids]
    settings = Settings(redis_url=SecretStr(redis_url), hitl_redis_max_connections=POOL)
    gate = Gate(settings=settings, policy=parse_policy(POLICY), requester="agent-7")
    polls_max = REQUESTS * POLLS_EACH + 20
    api = httpx.AsyncClient(
        base_url=bot.url,
        headers=API,
        timeout=90,
        limits=httpx.Limits(max_connections=polls_max, max_keepalive_connections=polls_max),
    )
    health: list[int] = []
    try:
        polls = [
            asyncio.create_task(api.get(f"/v1/approvals/{rid}", params={"wait": 60}))
            for rid in rids
            for _ in range(POLLS_EACH)
        ]
        sdk = [
            asyncio.create_task(gate.decision(rid, timeout=120))
            for rid in rids
            for _ in range(SDK_EACH)
        ]
        await _until(lambda: _served_waiters(api), REQUESTS * POLLS_EACH)
        direct = (await gate.backend()).rt  # type: ignore[attr-defined]

        async def sdk_waiters() -> int:
            return int(direct.waits())

        await _until(sdk_waiters, REQUESTS * SDK_EACH)

        probing = asyncio.Event()

        async def probe() -> None:
            while not probing.is_set():
                health.append((await api.get("/healthz")).status_code)
                await asyncio.sleep(0.02)

        prober = asyncio.create_task(probe())
        made = await api.post("/v1/approvals", json={"tool": "refund", "args": {"amount": 1}})
        assert made.status_code == 201, made.text
        for ch, ts in cards:
            out = await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
            assert out.status == 200
        async with asyncio.timeout(60):
            polled = await asyncio.gather(*polls)
            decided: list[ActionRequest] = await asyncio.gather(*sdk)
        probing.set()
        await prober
    finally:
        await api.aclose()
        await gate.aclose()
    assert {r.status_code for r in polled} == {200}
    assert {r.json()["state"] for r in polled} == {"approved"}
    assert {r.state for r in decided} == {State.APPROVED}
    assert {r.resolution.actor for r in decided if r.resolution} == {"UALICE"}
    assert health and set(health) == {200}
    assert "Too many connections" not in caplog.text
