"""`hitl-bot claude-code hook` as Claude Code runs it: one process per tool call, JSON on
stdin and stdout, next to the real bot (`run_serve` on the Slack emulator and a real
Valkey). The hook talks to the gate straight over Redis ("direct") or over serve's /v1
API ("http"), as a user's environment sets it up."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.models import ActionRequest
from tests.e2e.conftest import POLICY, Bot, bot, serve_env, serve_options, slack_mode
from tests.support.keys import serve_signer
from tests.support.poll import eventually

# the e2e fixtures, served here
__all__ = ["Bot", "bot", "serve_env", "serve_options", "slack_mode"]

ROOT = Path(__file__).resolve().parents[2]
API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN
HOOK = ("-m", "bot", "claude-code", "hook")
START_S = 60.0  # a fresh interpreter on a busy machine, plus the wait for its card

# Direct mode's policy: the bot's, plus Claude Code's own tools under their own names.
CC_POLICY: dict[str, Any] = {
    **POLICY,
    "tools": {
        **POLICY["tools"],
        "Read": {"tier": "low", "review": "none"},
        "Bash": {"tier": "medium"},
        "Write": {"tier": "medium"},
    },
}


def call_json(tool: str, args: dict[str, Any], session: str) -> dict[str, Any]:
    """What Claude Code writes on a PreToolUse hook's stdin."""
    return {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": "/home/dev/shop-api",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": args,
        "tool_use_id": "toolu_" + uuid.uuid4().hex[:20],
    }


@dataclass
class Running:
    """One hook process: Claude Code waiting on it."""

    proc: asyncio.subprocess.Process

    async def answer(self, timeout_s: float = START_S) -> dict[str, Any]:
        """Its stdout as JSON, once it exits; it always exits 0 (else Claude Code would
        treat it as a non-blocking error and run the call)."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out, err = await asyncio.wait_for(
            asyncio.gather(self.proc.stdout.read(), self.proc.stderr.read()), timeout_s
        )
        code = await asyncio.wait_for(self.proc.wait(), timeout_s)
        assert code == 0, err.decode()
        return dict(json.loads(out))

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)


@dataclass
class Hook:
    """Starts `hitl-bot claude-code hook` the way Claude Code does."""

    mode: str  # "direct" or "http"
    env: dict[str, str]
    session: str = field(default_factory=lambda: str(uuid.uuid4()))  # Claude's session id
    started: list[Running] = field(default_factory=list)

    async def start(
        self, tool: str, args: dict[str, Any], *extra: str, stdin: bytes | None = None
    ) -> Running:
        data = stdin if stdin is not None else json.dumps(call_json(tool, args, self.session))
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *HOOK,
            *extra,
            env=self.env,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdin is not None
        proc.stdin.write(data if isinstance(data, bytes) else data.encode())
        await proc.stdin.drain()
        proc.stdin.close()
        running = Running(proc)
        self.started.append(running)
        return running

    async def __call__(self, tool: str, args: dict[str, Any], *extra: str) -> dict[str, Any]:
        return await (await self.start(tool, args, *extra)).answer()


def hook_env(mode: str, redis_url: str, tmp_path: Path, api_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HITL_", "REDIS_"))}
    env |= {
        "PYTHONPATH": str(ROOT),
        "HITL_DATA_DIR": str(tmp_path / "data"),
        # an executor beside serve holds serve's public key, never the private one
        "HITL_SIGNING_PUBLIC_KEY": serve_signer().public_b64(),
    }
    if mode == "http":
        return env | {"HITL_API_URL": api_url, "HITL_API_TOKEN": API_TOKEN}
    policy = tmp_path / "cc-policy.yaml"
    policy.write_text(yaml.safe_dump(CC_POLICY))
    return env | {"REDIS_URL": redis_url, "HITL_POLICY": str(policy)}


async def _hook(mode: str, bot: Bot, redis_url: str, tmp_path: Path) -> AsyncIterator[Hook]:
    hook = Hook(mode, hook_env(mode, redis_url, tmp_path, bot.url))
    try:
        yield hook
    finally:
        for r in hook.started:  # a test that failed mid-wait leaves no process behind
            if r.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    r.proc.send_signal(signal.SIGKILL)
                await r.proc.wait()


@pytest.fixture
async def direct(bot: Bot, redis_url: str, tmp_path: Path) -> AsyncIterator[Hook]:
    """The hook on the bot's Redis, with a policy that names Claude Code's tools."""
    async for hook in _hook("direct", bot, redis_url, tmp_path):
        yield hook


@pytest.fixture
async def http(bot: Bot, redis_url: str, tmp_path: Path) -> AsyncIterator[Hook]:
    """The hook on serve's API, with the bot's own policy (Bash: the default tier)."""
    async for hook in _hook("http", bot, redis_url, tmp_path):
        yield hook


@pytest.fixture(params=["direct", "http"])
async def any_hook(
    request: pytest.FixtureRequest, bot: Bot, redis_url: str, tmp_path: Path
) -> AsyncIterator[Hook]:
    async for hook in _hook(request.param, bot, redis_url, tmp_path):
        yield hook


async def card(bot: Bot) -> tuple[ActionRequest, str, str]:
    """The request a hook waits on, once its card is posted: (request, channel, ts)."""

    async def probe() -> ActionRequest | None:
        pending = await bot.requests.list_pending()
        return pending[0] if pending else None

    req = await eventually(probe, what="a request in review", timeout_s=START_S)
    ch, ts = await bot.message_of(req.id)
    return req, ch, ts


def decision(answer: dict[str, Any]) -> tuple[str, str]:
    """(permissionDecision, permissionDecisionReason) of a hook's answer."""
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    return out["permissionDecision"], out["permissionDecisionReason"]
