"""The recipes in examples/ against a real `hitl-bot serve`, the Slack emulator and the
scripted model: the bot fixture is the end-to-end suite's own."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import socket
from collections.abc import AsyncIterator, Awaitable
from types import ModuleType
from typing import Any

import pytest

from bot.core.models import ActionRequest
from bot.errors import HitlError
from bot.gate.execution import withdraw
from bot.slack.blocks import render
from tests.e2e.conftest import Bot, bot, serve_env, serve_options, slack_mode
from tests.support.poll import eventually

# the e2e fixtures, served to the tests here
__all__ = ["bot", "serve_env", "serve_options", "slack_mode"]

API_TOKEN = "api-token-0123456789"  # the e2e bot's HITL_API_TOKEN


class Refunds:
    """Counts the refunds that really ran: wraps the example's own `send_refund`."""

    def __init__(self) -> None:
        self.issued: list[tuple[Any, ...]] = []

    def watch(self, monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> None:
        real = module.send_refund
        if inspect.iscoroutinefunction(real):

            async def counted(*args: Any) -> Any:
                self.issued.append(args)
                return await real(*args)

            monkeypatch.setattr(module, "send_refund", counted)
        else:

            def counted_sync(*args: Any) -> Any:
                self.issued.append(args)
                return real(*args)

            monkeypatch.setattr(module, "send_refund", counted_sync)


@pytest.fixture
def refunds() -> Refunds:
    return Refunds()


async def pending(bot: Bot) -> ActionRequest | None:
    pending = await bot.requests.list_pending()
    return pending[0] if pending else None


async def approve(bot: Bot, user: str = "UALICE") -> ActionRequest:
    """Wait for the recipe's request to be posted, and click Approve on its card."""
    req = await eventually(lambda: pending(bot), timeout_s=20)
    ch, ts = await bot.message_of(req.id)
    out = await bot.emu.click(user, render.ACTION_APPROVE, channel=ch, ts=ts)
    assert out.status == 200, out
    return req


async def reject(bot: Bot, code: str, text: str, user: str = "UALICE") -> ActionRequest:
    """Wait for the recipe's request, click Reject and give the reason in the dialog."""
    req = await eventually(lambda: pending(bot), timeout_s=20)
    ch, ts = await bot.message_of(req.id)
    await bot.emu.click(user, render.ACTION_REJECT, channel=ch, ts=ts)

    async def dialog() -> Any:
        return bot.emu.open_view(user)

    view = await eventually(dialog)
    out = await bot.emu.submit(
        user,
        view.id,
        {
            render.REASON_BLOCK: {render.REASON_ACTION: code},
            render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: text},
        },
    )
    assert out.view_action == "closed", out
    return req


@contextlib.asynccontextmanager
async def running(bot: Bot, work: Awaitable[str]) -> AsyncIterator[asyncio.Task[str]]:
    """Run a recipe beside the test. If the test fails while the recipe still waits for a
    person, its requests are withdrawn so the recipe ends: a sync recipe's thread cannot be
    cancelled and would otherwise wait out the review deadline."""
    task = asyncio.ensure_future(work)
    try:
        yield task
    finally:
        if not task.done():
            for req in await bot.requests.list_pending():
                with contextlib.suppress(HitlError):
                    await withdraw(bot.requests, req.id, actor="test", reason="test_failed")
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 30)


def closed_port_url() -> str:
    """An address where nothing listens: the API unreachable."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
