"""The gateway against the real bot: `hitl-bot mcp` runs as a process of its own, as an
MCP client would start it, next to `run_serve` on the Slack emulator and a real Valkey."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, StdioServerParameters

from tests.e2e.conftest import POLICY, Bot, bot, serve_env, serve_options, slack_mode
from tests.support.keys import serve_signer

__all__ = ["Bot", "bot", "serve_env", "serve_options", "slack_mode"]

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = "demo"
# The proxy's policy: the bot's, plus the upstream's tools under their gateway names.
MCP_POLICY: dict[str, Any] = {
    **POLICY,
    "tools": {
        **POLICY["tools"],
        "demo__lookup": {"tier": "low", "review": "none"},
        "demo__crash": {"tier": "low", "review": "none"},
        "demo__delete": {"tier": "medium"},
        "demo__book": {"tier": "low", "review": "none"},
        "demo__wipe": {"tier": "low", "review": "none"},
        "Read": {"tier": "low", "review": "none"},
        "Bash": {"tier": "medium"},
    },
}


@dataclass
class Setup:
    env: dict[str, str]
    log: Path  # what the upstream ran, one JSON line per call
    config: Path

    def ran(self) -> list[dict[str, Any]]:
        """The upstream's tool calls that ran, in order (its starts left out)."""
        return [e for e in self.lines() if e["tool"] != "start"]

    def starts(self) -> int:
        """How many times an upstream process was started."""
        return sum(1 for e in self.lines() if e["tool"] == "start")

    def lines(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(x) for x in self.log.read_text().splitlines()]

    def proxy_argv(self, *extra: str) -> list[str]:
        return ["-m", "bot", "mcp", "proxy", "--config", str(self.config), *extra]


@pytest.fixture
def setup(bot: Bot, redis_url: str, tmp_path: Path) -> Setup:
    policy = tmp_path / "mcp-policy.yaml"
    policy.write_text(yaml.safe_dump(MCP_POLICY))
    log = tmp_path / "upstream.jsonl"
    env = {
        "REDIS_URL": redis_url,
        "HITL_POLICY": str(policy),
        "UPSTREAM_LOG": str(log),
        "PYTHONPATH": str(ROOT),
        "HITL_DATA_DIR": str(tmp_path / "data"),
        # an executor beside serve: it holds serve's public key, never the private one
        "HITL_SIGNING_PUBLIC_KEY": serve_signer().public_b64(),
    }
    config = tmp_path / "proxy.yaml"
    upstream = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp.upstream_server"],
        "env": {"UPSTREAM_LOG": str(log), "PYTHONPATH": str(ROOT)},
    }
    config.write_text(yaml.safe_dump({"upstreams": {UPSTREAM: upstream}}))
    return Setup(env, log, config)


def stdio_params(setup: Setup, *argv: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=list(argv), env=setup.env, cwd=str(ROOT)
    )


@contextlib.contextmanager
def http_process(setup: Setup, *argv: str) -> Iterator[str]:
    """`hitl-bot mcp ... --port 0` as a process; yields its /mcp URL once it listens."""
    with http_proc(setup, *argv) as (url, _):
        yield url


@contextlib.contextmanager
def http_proc(setup: Setup, *argv: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`http_process`, also yielding the process, for tests that signal it."""
    proc = subprocess.Popen(
        [sys.executable, *argv, "--port", "0"],
        env={**os.environ, **setup.env},
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        assert proc.stderr is not None
        while True:
            line = proc.stderr.readline()
            found = re.search(r"(http://\S+/mcp)", line)
            if found:
                break
            assert line and time.monotonic() < deadline, "the MCP process never listened"
        # Keep reading its log, or a full pipe would block the process.
        drain = threading.Thread(target=proc.stderr.read, daemon=True)
        drain.start()
        yield found.group(1), proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture(params=["stdio", "http"])
async def proxy(request: pytest.FixtureRequest, setup: Setup) -> AsyncIterator[Client]:
    """An MCP client connected to the gateway, over stdio or streamable HTTP."""
    if request.param == "stdio":
        async with owned(Client(stdio_params(setup, *setup.proxy_argv()))) as client:
            yield client
        return
    with http_process(setup, *setup.proxy_argv()) as url:
        async with owned(Client(url)) as client:
            yield client


@pytest.fixture
async def stdio_proxy(setup: Setup) -> AsyncIterator[Client]:
    """The gateway over stdio only, for the decision paths (the transports are covered above)."""
    async with owned(Client(stdio_params(setup, *setup.proxy_argv()))) as client:
        yield client


@contextlib.asynccontextmanager
async def owned(client: Client) -> AsyncIterator[Client]:
    """Enter and leave the client in one task of its own: its anyio scopes must be left by
    the task that entered them, and pytest-asyncio sets up and tears down in different ones."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def own() -> None:
        try:
            async with client as c:
                ready.set_result(c)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.create_task(own())
    try:
        yield await asyncio.wait_for(asyncio.shield(ready), 30)
    finally:
        done.set()
        await asyncio.wait_for(task, 30)
