"""The gateway reads its upstream tools' MCP annotations as the tier where the policy
names none: driven through the real proxy against an upstream built on the SDK."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client

from bot.core.models import RiskTier
from bot.slack.blocks import render
from tests.e2e.conftest import Bot, all_text
from tests.mcp.conftest import MCP_POLICY, ROOT, Setup, owned, stdio_params
from tests.support.poll import eventually

POLICY: dict[str, Any] = {
    **MCP_POLICY,
    "default_tier": "low",
    "tools": {
        **MCP_POLICY["tools"],
        "ann__pinned": {"tier": "low"},  # the policy speaks: its tier, whatever the hint
        "ann__free": {"review": "none"},  # names no tier: the hint's applies
    },
}
EXPECTED = {
    "ann__peek": RiskTier.LOW,  # read-only: the default, never lowered, still reviewed
    "ann__scrub": RiskTier.MEDIUM,  # destructive, closed world
    "ann__wipe": RiskTier.HIGH,  # destructive, open world (spec defaults)
    "ann__pinned": RiskTier.LOW,  # the policy's tier
    "ann__free": RiskTier.HIGH,  # raised above the default: a person decides after all
    "ann__plain": RiskTier.LOW,  # no annotations: the policy's default
}


@pytest.fixture
def annotated(setup: Setup, tmp_path: Path) -> Setup:
    """The gateway in front of the annotated upstream, under `POLICY`."""
    policy = tmp_path / "annotated-policy.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    config = tmp_path / "annotated.yaml"
    upstream = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp.annotated_server"],
        "env": {"PYTHONPATH": str(ROOT)},
    }
    config.write_text(yaml.safe_dump({"upstreams": {"ann": upstream}}))
    return Setup({**setup.env, "HITL_POLICY": str(policy)}, setup.log, config)


async def test_each_call_gets_the_tier_its_annotations_suggest(annotated: Setup, bot: Bot) -> None:
    async with owned(Client(stdio_params(annotated, *annotated.proxy_argv()))) as client:
        calls = {
            name: asyncio.create_task(client.call_tool(name, {"bucket": "b"}))
            if name in ("ann__wipe", "ann__pinned", "ann__free")
            else asyncio.create_task(
                client.call_tool(name, {"path" if name == "ann__scrub" else "key": "k"})
            )
            for name in EXPECTED
        }

        async def all_pending() -> dict[str, Any] | None:
            reqs = {r.tool: r for r in await bot.requests.list_pending()}
            return reqs if set(reqs) == set(EXPECTED) else None

        pending = await eventually(all_pending)
        assert {tool: r.risk for tool, r in pending.items()} == EXPECTED
        assert not any(c.done() for c in calls.values())  # each waits for a person
        # The card a person sees says the tier the hint gave.
        ch, ts = await bot.message_of(pending["ann__wipe"].id)
        # Under the gateway's run, a card may be a reply in the run's thread.
        top = bot.emu.messages(ch)
        seen = [*top, *(r for m in top for r in bot.emu.replies(ch, m.ts))]
        [card] = [m for m in seen if m.ts == ts]
        assert "HIGH" in all_text(card.blocks)
        # Once a person approves, the call runs as any other.
        ch, ts = await bot.message_of(pending["ann__scrub"].id)
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
        out = await asyncio.wait_for(calls["ann__scrub"], 15)
        assert not out.is_error


def test_print_policy_shows_what_it_inferred(annotated: Setup) -> None:
    out = subprocess.run(
        [sys.executable, *annotated.proxy_argv("--print-policy")],
        env={**os.environ, **annotated.env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    printed = yaml.safe_load(out.stdout)
    assert printed == {"tools": {k: {"tier": v.value} for k, v in EXPECTED.items()}}
    lines = {line.split(":")[0].strip(): line for line in out.stdout.splitlines()}
    assert "the policy names it" in lines["ann__pinned"]
    assert "destructive" in lines["ann__wipe"] and "open world" in lines["ann__wipe"]
    assert "no annotations" in lines["ann__plain"]
