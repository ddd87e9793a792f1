"""An MCP client's run, steered and stopped from Slack, through `proxy` and `serve`.

Each MCP session's calls belong to a run: the one given (`--run-id`, `HITL_RUN_ID`) or
one made for the session and shown on its first card. A person's correction comes back
as the next call's tool error (or the permission prompt's deny) in their words, and
nothing runs; after `/hitl stop RUN` every call comes back saying the run was stopped.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from mcp import Client

from bot.core.states import State
from bot.slack.blocks import render
from tests.e2e.conftest import Bot, all_text, button_values
from tests.mcp.conftest import ROOT, Setup, owned, stdio_params
from tests.mcp.test_proxy import text
from tests.support.poll import eventually

RUN = "mcp-session-7"
SERVE = ("-m", "bot", "mcp", "serve")


async def _card(bot: Bot) -> tuple[str, str, str]:
    pending = await eventually(bot.requests.list_pending, what="a request in review")
    ch, ts = await bot.message_of(pending[0].id)
    return pending[0].id, ch, ts


async def _steer(bot: Bot, words: str, run_id: str = RUN) -> None:
    out = await bot.emu.command("UALICE", "#hitl-approvals", "/hitl", f"steer {run_id} {words}")
    assert out.status == 200


async def _home(bot: Bot, run_id: str = RUN) -> Any:
    run = await bot.runs.get(run_id)
    return run if run.thread_ts else None


async def test_a_reply_in_the_cards_thread_withdraws_the_proxied_call_with_the_words(
    bot: Bot, setup: Setup
) -> None:
    async with owned(Client(stdio_params(setup, *setup.proxy_argv("--run-id", RUN)))) as proxy:
        call = asyncio.create_task(proxy.call_tool("demo__delete", {"path": "/srv/a"}))
        rid, ch, ts = await _card(bot)
        await eventually(lambda: _home(bot), what="the run's home thread")

        await bot.emu.post("UALICE", ch, "not /srv/a: delete /srv/b", thread_ts=ts)

        out = await asyncio.wait_for(call, 15)
        assert out.is_error
        assert text(out) == "Cancelled. The person says: not /srv/a: delete /srv/b"
        assert setup.ran() == []
        req = await bot.requests.get(rid)
        assert req.state == State.CANCELLED and req.run_id == RUN
        assert req.resolution is not None and req.resolution.reason_code == "superseded"
        # the words were handed over once: the next call is the session's own again
        again = asyncio.create_task(proxy.call_tool("demo__delete", {"path": "/srv/b"}))
        second = await eventually(
            lambda: [m for m in bot.emu.replies(ch, ts) if button_values(m.blocks)],
            what="the next card, in the run's thread",
        )
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=second[-1].ts)
        assert not (await asyncio.wait_for(again, 15)).is_error
        assert [r["args"]["path"] for r in setup.ran()] == ["/srv/b"]


async def test_a_correction_queued_between_calls_refuses_the_next_even_a_free_one(
    bot: Bot, setup: Setup
) -> None:
    async with owned(Client(stdio_params(setup, *setup.proxy_argv("--run-id", RUN)))) as proxy:
        call = asyncio.create_task(proxy.call_tool("demo__delete", {"path": "/srv/a"}))
        _, ch, ts = await _card(bot)
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
        assert not (await asyncio.wait_for(call, 15)).is_error
        # nothing waits now; a reply in the run's thread (its first card's) is queued
        await bot.emu.post("UALICE", ch, "stop looking things up, summarise", thread_ts=ts)
        await eventually(lambda: bot.steering.pending(RUN), what="the queued correction")

        out = await proxy.call_tool("demo__lookup", {"key": "size"})

        assert out.is_error
        assert text(out) == "Cancelled. The person says: stop looking things up, summarise"
        assert [r["tool"] for r in setup.ran()] == ["delete"]
        assert not (await proxy.call_tool("demo__lookup", {"key": "size"})).is_error


async def test_hitl_stop_refuses_the_waiting_call_and_every_later_one(
    bot: Bot, setup: Setup
) -> None:
    async with owned(Client(stdio_params(setup, *setup.proxy_argv("--run-id", RUN)))) as proxy:
        call = asyncio.create_task(proxy.call_tool("demo__delete", {"path": "/srv/a"}))
        await _card(bot)
        out = await bot.emu.command("UALICE", "#hitl-approvals", "/hitl", f"stop {RUN}")
        assert out.status == 200

        waited = await asyncio.wait_for(call, 15)
        assert waited.is_error and "stopped by a person" in text(waited)
        later = await proxy.call_tool("demo__lookup", {"key": "colour"})
        assert later.is_error
        assert text(later) == "Cancelled: the run was stopped by a person. Do nothing more."
        assert setup.ran() == []
        run = await bot.runs.get(RUN)
        assert run.outside and run.state.value == "stopped"
        assert run.prompt == "MCP gateway to demo"  # its name in Slack and `hitl-bot runs`


async def test_without_a_run_id_each_gateway_makes_one_shown_on_its_card(
    bot: Bot, setup: Setup
) -> None:
    """Two stdio sessions (two gateway processes): two runs, each stopped on its own."""
    params = stdio_params(setup, *setup.proxy_argv())
    async with owned(Client(params)) as one, owned(Client(params)) as two:
        calls = [
            asyncio.create_task(c.call_tool("demo__delete", {"path": p}))
            for c, p in ((one, "/one"), (two, "/two"))
        ]
        pending = await eventually(
            lambda: _n_pending(bot, 2), what="both sessions' requests in review"
        )
        runs = {r.run_id for r in pending}
        assert len(runs) == 2 and all(r and r.startswith("mcp-proxy-") for r in runs)
        for r in pending:
            ch, ts = await bot.message_of(r.id)
            card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
            assert str(r.run_id) in all_text(card.blocks)
        # the id on the card is one a person can stop
        stop = next(r for r in pending if r.args["path"] == "/one")
        out = await bot.emu.command("UALICE", "#hitl-approvals", "/hitl", f"stop {stop.run_id}")
        assert out.status == 200
        assert "stopped" in text(await asyncio.wait_for(calls[0], 15))
        assert not calls[1].done()
        calls[1].cancel()
        await asyncio.gather(calls[1], return_exceptions=True)


async def _n_pending(bot: Bot, n: int) -> Any:
    got = await bot.requests.list_pending()
    return got if len(got) == n else None


async def test_the_permission_prompt_denies_with_the_persons_words(bot: Bot, setup: Setup) -> None:
    env = {**setup.env, "HITL_RUN_ID": RUN}
    params = stdio_params(setup, *SERVE).model_copy(update={"env": env})
    async with owned(Client(params)) as hitl:
        prompt = asyncio.create_task(
            hitl.call_tool("permission_prompt", {"tool_name": "Bash", "input": {"command": "ls"}})
        )
        _, ch, ts = await _card(bot)
        run = await eventually(lambda: _home(bot), what="the run's home thread")
        assert run.prompt == "MCP client (hitl-bot mcp serve)"
        card = next(m for m in bot.emu.messages(ch) if m.ts == ts)
        assert "MCP client (hitl-bot mcp serve)" in all_text(card.blocks)
        await bot.emu.post("UALICE", ch, "use git status instead", thread_ts=ts)

        out = await asyncio.wait_for(prompt, 15)
        assert json.loads(text(out)) == {
            "behavior": "deny",
            "message": "Cancelled. The person says: use git status instead",
        }
        await bot.emu.command("UALICE", "#hitl-approvals", "/hitl", f"stop {RUN}")
        after = await hitl.call_tool(
            "request_approval", {"tool": "Bash", "args": {"command": "git status"}}
        )
        answer = json.loads(text(after))
        assert answer["approved"] is False and "run was stopped" in answer["reason"]


def test_a_malformed_run_id_stops_start_up_naming_the_rule(setup: Setup) -> None:
    proc = subprocess.run(
        [sys.executable, *SERVE, "--run-id", "no spaces/here"],
        env={**os.environ, **setup.env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Run id 'no spaces/here' is not valid" in proc.stderr


async def test_a_gateways_calls_share_its_made_run_id(bot: Bot, proxy: Client) -> None:
    """Over stdio and HTTP alike: one gateway, one run, so a stop reaches all its calls."""
    for key in ("colour", "size"):
        assert not (await proxy.call_tool("demo__lookup", {"key": key})).is_error
    reqs = [await bot.requests.get(rid) for rid in await bot.requests.ids_between(0)]
    runs = {r.run_id for r in reqs}
    assert len(reqs) == 2 and len(runs) == 1, runs
