"""Driving a JavaScript agent step by step: it prints one JSON line per step, and a line
on its stdin says "go on"; and finding the call it filed in review."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from bot.core.models import ActionRequest
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

STEP_S = 60.0


class Agent:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def step(self, name: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), STEP_S)
        if not line:
            err = await self.proc.stderr.read() if self.proc.stderr else b""
            pytest.fail(f"the agent ended before {name}: {err.decode()[-3000:]}")
        got: dict[str, Any] = json.loads(line)
        assert got["step"] == name, got
        return got

    async def go_on(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        await self.proc.stdin.drain()


async def pending(bot: Bot, tool: str, order: str) -> ActionRequest:
    async def found() -> ActionRequest | None:
        for r in await bot.requests.list_pending():
            if r.tool == tool and r.args.get("order") == order:
                return r
        return None

    return await eventually(found, what=f"{tool} {order} in review", timeout_s=STEP_S)
