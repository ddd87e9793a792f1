"""The gateway: upstream tools behind the gate, decided by people in the Slack emulator."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import yaml
from mcp import Client
from mcp_types import TextContent

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.slack.blocks import render
from bot.store import audit
from bot.store.requests import RequestStore
from tests.e2e.conftest import Bot, button_values
from tests.mcp.conftest import (
    ROOT,
    Setup,
    http_proc,
    http_process,
    owned,
    stdio_params,
)
from tests.support.poll import eventually, eventually_sync


def text(result: Any) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def pending_one(bot: Bot) -> str:
    async def probe() -> str | None:
        reqs = await bot.requests.list_pending()
        return reqs[0].id if reqs else None

    return str(await eventually(probe))


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


async def _view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)


async def test_reject_in_slack_is_a_tool_error_with_the_reason(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    call = asyncio.create_task(stdio_proxy.call_tool("demo__delete", {"path": "/etc"}))
    rid = await pending_one(bot)
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UKID", render.ACTION_REJECT, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UKID"))
    await bot.emu.submit(
        "UKID",
        view.id,
        {
            render.REASON_BLOCK: {render.REASON_ACTION: "wrong_target"},
            render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: "never /etc"},
        },
    )
    out = await asyncio.wait_for(call, 15)
    assert out.is_error
    said = text(out)
    assert "rejected by UKID" in said and "wrong_target" in said and "never /etc" in said
    assert setup.ran() == []


async def test_edited_args_are_what_the_upstream_runs(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    call = asyncio.create_task(
        stdio_proxy.call_tool("demo__delete", {"path": "/srv", "recursive": True})
    )
    rid = await pending_one(bot)
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UBOB", render.ACTION_EDIT, channel=ch, ts=ts)
    view = await eventually(lambda: _view(bot, "UBOB"))
    # The upstream's input schema rides with the request: an edit that breaks it is refused.
    bad = await bot.emu.submit(
        "UBOB", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: '{"path": 7}'}}
    )
    assert bad.view_action == "errors"
    edited = '{"path": "/srv/tmp", "recursive": false}'
    good = await bot.emu.submit("UBOB", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: edited}})
    assert good.view_action == "closed", good
    out = await asyncio.wait_for(call, 15)
    assert not out.is_error and text(out) == "deleted /srv/tmp"
    assert setup.ran() == [{"tool": "delete", "args": {"path": "/srv/tmp", "recursive": False}}]
    req = await bot.requests.get(rid)
    assert req.original_hash is not None and req.state == State.COMPLETED


async def test_nobody_deciding_is_a_tool_error_and_nothing_runs(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    call = asyncio.create_task(stdio_proxy.call_tool("demo__delete", {"path": "/a"}))
    rid = await pending_one(bot)
    await bot.message_of(rid)
    # The proxy stamps requests with the wall clock, a little ahead of the bot's fake one.
    bot.clock.advance(11 * 60_000)  # past the first level's deadline: escalates

    async def escalated() -> bool:
        return (await bot.requests.get(rid)).level == 1

    await eventually(escalated)
    bot.clock.advance(11 * 60_000)  # the last level's: the policy's default applies
    out = await asyncio.wait_for(call, 15)
    assert out.is_error and "in time" in text(out) and "did not run" in text(out)
    assert (await bot.requests.get(rid)).state == State.AUTO_REJECTED
    assert setup.ran() == []


async def test_client_stopping_the_call_withdraws_the_request_in_slack(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    call = asyncio.create_task(stdio_proxy.call_tool("demo__delete", {"path": "/b"}))
    rid = await pending_one(bot)
    ch, ts = await bot.message_of(rid)
    call.cancel()  # the agent gives up: the SDK sends notifications/cancelled

    async def withdrawn() -> bool:
        req = await bot.requests.get(rid)
        return req.state == State.CANCELLED

    await eventually(withdrawn)
    req = await bot.requests.get(rid)
    assert req.resolution is not None and req.resolution.reason_code == "abandoned"

    # The card in Slack loses its buttons: nobody can approve a call nobody will make.
    async def no_buttons() -> bool:
        card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
        return not button_values(card.blocks)

    await eventually(no_buttons)
    assert setup.ran() == []
    # The gateway still serves this session.
    out = await stdio_proxy.call_tool("demo__lookup", {"key": "k"})
    assert not out.is_error


async def test_an_operator_stop_is_a_tool_error_saying_so(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    call = asyncio.create_task(stdio_proxy.call_tool("demo__delete", {"path": "/c"}))
    rid = await pending_one(bot)
    # What a stopped run does to the request it waits on (bot.gate.corrections.stop_run).
    await bot.requests.transition(
        rid, Decision(event=Event.CANCEL, actor="UALICE", reason_code="run_stopped")
    )
    out = await asyncio.wait_for(call, 15)
    assert out.is_error and "withdrawn by UALICE (run_stopped)" in text(out)
    assert setup.ran() == []


async def test_an_upstream_crash_is_a_tool_error_and_the_gateway_carries_on(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    out = await stdio_proxy.call_tool("demo__crash", {})
    assert out.is_error and "upstream 'demo' failed" in text(out)
    [rid] = await bot.requests.ids_between(0)
    trail = await audit.entries(bot.redis, rid)
    assert any(e.text and "upstream demo: crash crashed" in e.text for e in trail)
    # The next call starts the upstream again.
    again = await stdio_proxy.call_tool("demo__lookup", {"key": "after"})
    assert not again.is_error and text(again) == "value of after"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _http_upstream(setup: Setup) -> Iterator[str]:
    """The test upstream serving streamable HTTP, as a process of its own."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.upstream_server", "--port", str(port)],
        env={**os.environ, **setup.env},
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            assert proc.poll() is None, "the upstream exited"
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        eventually_sync(listening, what="the upstream listening", timeout_s=20)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(15)


async def test_an_http_upstream_and_an_approval_on_it(bot: Bot, setup: Setup) -> None:
    with _http_upstream(setup) as url:
        setup.config.write_text(yaml.safe_dump({"upstreams": {"web": {"url": url}}}))
        async with owned(Client(stdio_params(setup, *setup.proxy_argv()))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "web__delete" in names
            call = asyncio.create_task(client.call_tool("web__delete", {"path": "/w"}))
            rid = await pending_one(bot)
            ch, ts = await bot.message_of(rid)
            await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
            out = await asyncio.wait_for(call, 15)
    assert not out.is_error and text(out) == "deleted /w"
    trail = await audit.entries(bot.redis, rid)
    assert any(e.text and "upstream web: delete ran" in e.text for e in trail)


async def test_one_upstream_given_after_the_double_dash(bot: Bot, setup: Setup) -> None:
    argv = ["-m", "bot", "mcp", "proxy", "--name", "demo", "--"]
    # An upstream gets the SDK's minimal environment, never the proxy's (its gate token):
    # what it needs goes in on its command line, or in `env:` in a config file.
    argv += ["env", f"UPSTREAM_LOG={setup.log}", sys.executable, "-m", "tests.mcp.upstream_server"]
    async with owned(Client(stdio_params(setup, *argv))) as client:
        out = await client.call_tool("demo__lookup", {"key": "k"})
    assert not out.is_error and text(out) == "value of k"
    assert setup.ran() == [{"tool": "lookup", "args": {"key": "k"}}]


async def test_the_upstream_starts_with_the_gateway_not_at_the_first_listing(
    bot: Bot, setup: Setup
) -> None:
    """A client that starts its session as soon as it has listed the tools (Claude Code in
    print mode) must find the upstream's tools ready: the gateway starts its upstreams
    while the client's handshake is under way, not when the client first lists."""
    argv = ["-m", "bot", "mcp", "proxy", "--name", "demo", "--"]
    argv += ["env", f"UPSTREAM_LOG={setup.log}", sys.executable, "-m", "tests.mcp.upstream_server"]
    async with owned(Client(stdio_params(setup, *argv))) as client:
        await eventually(setup.starts, lambda n: n == 1, what="the upstream started")
        listed = await client.list_tools()
        assert "demo__lookup" in [t.name for t in listed.tools]
    assert setup.starts() == 1  # the listing used the upstream already started


async def test_concurrent_calls_are_decided_each_on_its_own(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    paths = ["/p0", "/p1", "/p2"]
    calls = [asyncio.create_task(stdio_proxy.call_tool("demo__delete", {"path": p})) for p in paths]

    async def all_pending() -> list[Any] | None:
        reqs = await bot.requests.list_pending()
        return reqs if len(reqs) == len(paths) else None

    by_path = {r.args["path"]: r.id for r in await eventually(all_pending)}
    for path, click in (("/p0", "approve"), ("/p1", "reject"), ("/p2", "approve")):
        ch, ts = await bot.message_of(by_path[path])
        if click == "approve":
            await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
        else:
            seen = (await bot.requests.get(by_path[path])).payload_hash
            no = Decision(event=Event.REJECT, actor="UBOB", reason_code="other", payload_hash=seen)
            await bot.requests.transition(by_path[path], no)
    outs = await asyncio.wait_for(asyncio.gather(*calls), 20)
    assert [o.is_error for o in outs] == [False, True, False]
    assert sorted(r["args"]["path"] for r in setup.ran()) == ["/p0", "/p2"]


async def test_over_the_http_api_with_a_token(bot: Bot, setup: Setup) -> None:
    """HITL_API_URL + HITL_API_TOKEN: the gateway never touches Redis itself."""
    setup.env.update(
        HITL_API_URL=bot.url, HITL_API_TOKEN="api-token-0123456789", REDIS_URL="redis://127.0.0.1:1"
    )
    async with owned(Client(stdio_params(setup, *setup.proxy_argv()))) as client:
        call = asyncio.create_task(client.call_tool("demo__delete", {"path": "/h"}))
        rid = await pending_one(bot)
        ch, ts = await bot.message_of(rid)
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
        out = await asyncio.wait_for(call, 15)
    assert not out.is_error and text(out) == "deleted /h"
    assert (await bot.requests.get(rid)).state == State.COMPLETED


async def test_an_http_upstream_behind_a_bearer_token(bot: Bot, setup: Setup) -> None:
    """The upstream is `hitl-bot mcp serve` itself, wanting a token the proxy has in its
    environment and the config names as ${UP_TOKEN}."""
    upstream_env = {**setup.env, "HITL_MCP_TOKEN": "up-secret"}
    serve = Setup(upstream_env, setup.log, setup.config)
    with http_process(serve, "-m", "bot", "mcp", "serve") as url:
        headers = {"Authorization": "Bearer ${UP_TOKEN}"}
        setup.config.write_text(
            yaml.safe_dump({"upstreams": {"hitl": {"url": url, "headers": headers}}})
        )
        setup.env["UP_TOKEN"] = "up-secret"
        async with owned(Client(stdio_params(setup, *setup.proxy_argv()))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert "hitl__permission_prompt" in names


async def test_an_upstream_tool_error_is_forwarded_and_audited_as_failed(
    stdio_proxy: Client, bot: Bot
) -> None:
    out = await stdio_proxy.call_tool("demo__lookup", {"key": "missing"})
    assert out.is_error and "no such key" in text(out)
    [rid] = await bot.requests.ids_between(0)
    trail = await audit.entries(bot.redis, rid)
    failed = next(e for e in trail if e.event == "fail")
    assert failed.text is not None and "upstream demo: lookup returned a tool error" in failed.text


async def test_with_the_gate_unreachable_nothing_runs(bot: Bot, setup: Setup) -> None:
    """Fail closed: not even a `review: none` tool runs without the gate's record."""
    setup.env.update(HITL_API_URL="http://127.0.0.1:1", HITL_API_TOKEN="t")
    async with owned(Client(stdio_params(setup, *setup.proxy_argv()))) as client:
        outs = [
            await client.call_tool("demo__lookup", {"key": "k"}),
            await client.call_tool("demo__delete", {"path": "/z"}),
        ]
    for out in outs:
        assert out.is_error and "approval gate could not be asked" in text(out)
    assert setup.ran() == []


async def test_stopping_the_gateway_withdraws_what_it_waits_on(bot: Bot, setup: Setup) -> None:
    """SIGTERM while a call waits for a person: the request is withdrawn, not left to
    be approved for a caller that is gone."""
    with http_proc(setup, *setup.proxy_argv()) as (url, proc):
        async with owned(Client(url)) as client:
            call = asyncio.create_task(client.call_tool("demo__delete", {"path": "/q"}))
            rid = await pending_one(bot)
            await bot.message_of(rid)
            proc.terminate()  # the client stays connected: only the signal stops the call
            await asyncio.to_thread(proc.wait, 15)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(call, 15)
    req = await bot.requests.get(rid)
    assert req.state == State.CANCELLED
    assert req.resolution is not None and req.resolution.reason_code == "abandoned"
    assert setup.ran() == []


async def test_a_forged_approval_never_reaches_the_upstream(
    stdio_proxy: Client, bot: Bot, setup: Setup
) -> None:
    """Approved with the store's own API (no serve key): the gateway refuses to run it."""
    call = asyncio.create_task(stdio_proxy.call_tool("demo__delete", {"path": "/f"}))
    rid = await pending_one(bot)
    req = await bot.requests.get(rid)
    forger = RequestStore(bot.redis)  # anything that reaches Redis, without serve's key
    await forger.transition(
        rid, Decision(event=Event.APPROVE, actor="UKID", payload_hash=req.payload_hash)
    )
    out = await asyncio.wait_for(call, 15)
    assert out.is_error and "not approved by this bot" in text(out)
    assert setup.ran() == []
    trail = await audit.entries(bot.redis, rid)
    assert [e.reason_code for e in trail if e.kind == "refused"] == ["forged_decision"]
