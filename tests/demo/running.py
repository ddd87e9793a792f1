"""The demo run in this test's event loop, driven through its page's HTTP endpoints."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from bot.config import Settings
from bot.demo.agents import refunds
from bot.demo.app import DemoOptions, serve_demo
from tests.support.poll import eventually


@asynccontextmanager
async def running_demo(
    data_dir: Path, options: DemoOptions
) -> AsyncIterator[tuple[httpx.AsyncClient, io.StringIO]]:
    """The page's client and what the demo printed, until the block ends."""
    printed = io.StringIO()
    stop = asyncio.Event()
    # Explicit Nones: the developer's REDIS_URL or OPENAI_BASE_URL must not leak in.
    env = Settings(hitl_data_dir=data_dir, redis_url=None, openai_base_url=None)
    task = asyncio.create_task(serve_demo(options, Console(file=printed, width=200), stop, env=env))

    async def page() -> str | None:
        if task.done():
            task.result()
        found = re.search(r"Open (http://127\.0\.0\.1:\d+)/", printed.getvalue())
        return found.group(1) if found else None

    ledger, orders = dict(refunds.LEDGER), dict(refunds.ORDERS)  # the desk is process-wide
    try:
        url = await eventually(page, timeout_s=20)
        async with httpx.AsyncClient(base_url=url, timeout=15) as client:
            yield client, printed
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        refunds.LEDGER.clear()
        refunds.LEDGER.update(ledger)
        refunds.ORDERS.clear()
        refunds.ORDERS.update(orders)


async def channel(page: httpx.AsyncClient, name: str) -> dict[str, Any]:
    state = (await page.get("/_emu/state")).json()
    return next(c for c in state["channels"] if c["name"] == name)


async def post(page: httpx.AsyncClient, user: str, text: str, where: str = "#general") -> str:
    """Post as `user`; the message's ts."""
    sent = await page.post("/_emu/post", json={"user": user, "channel": where, "text": text})
    return str(sent.json()["ts"])


async def reply_in(page: httpx.AsyncClient, home: str, needle: str) -> dict[str, Any] | None:
    """The reply in #general's thread of `home` that holds `needle`."""
    general = await channel(page, "general")
    message = next(m for m in general["messages"] if m["ts"] == home)
    return next((m for m in message["replies"] if needle in str(m)), None)
