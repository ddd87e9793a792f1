"""The gateway: upstream tools behind the gate, decided by people in the Slack emulator."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client
from mcp_types import TextContent

from bot.core.states import State
from bot.slack import render
from bot.store import audit
from tests.e2e.conftest import Bot
from tests.mcp.conftest import Setup, until


def text(result: Any) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def pending_one(bot: Bot) -> str:
    async def probe() -> str | None:
        reqs = await bot.requests.list_pending()
        return reqs[0].id if reqs else None

    return str(await until(probe))


async def test_lists_upstream_tools_under_its_name(proxy: Client) -> None:
    names = {t.name for t in (await proxy.list_tools()).tools}
    assert {"demo__lookup", "demo__delete", "demo__crash"} <= names


async def test_review_none_passes_straight_through_and_is_audited(
    proxy: Client, bot: Bot, setup: Setup
) -> None:
    out = await proxy.call_tool("demo__lookup", {"key": "colour"})
    assert not out.is_error and text(out) == "value of colour"
    assert setup.ran() == [{"tool": "lookup", "args": {"key": "colour"}}]
    [rid] = await bot.requests.ids_between(0)
    req = await bot.requests.get(rid)
    assert req.state == State.COMPLETED and req.tool == "demo__lookup"
    trail = await audit.entries(bot.redis, rid)
    assert [e.reason_code for e in trail if e.event == "approve"] == ["no_review"]
    assert any(e.text and "upstream demo" in e.text for e in trail)


async def test_gated_call_waits_for_approve_in_slack(proxy: Client, bot: Bot, setup: Setup) -> None:
    call = asyncio.create_task(proxy.call_tool("demo__delete", {"path": "/tmp/x"}))
    rid = await pending_one(bot)
    ch, ts = await bot.message_of(rid)
    assert setup.ran() == [] and not call.done()
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    out = await asyncio.wait_for(call, 15)
    assert not out.is_error and text(out) == "deleted /tmp/x"
    assert setup.ran() == [{"tool": "delete", "args": {"path": "/tmp/x", "recursive": False}}]
    req = await bot.requests.get(rid)
    assert req.state == State.COMPLETED
    trail = await audit.entries(bot.redis, rid)
    assert any(e.event == "approve" and e.actor == "UALICE" for e in trail)
    assert any(e.text and "upstream demo: delete ran" in e.text for e in trail)
