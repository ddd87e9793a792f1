"""`hitl-bot mcp serve`'s ask_human with options: a button per option in Slack, and the
tool's result is the option a person clicked."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client
from mcp_types import TextContent

from bot.slack.blocks.options import ACTION_OPTION
from tests.e2e.conftest import Bot, all_text, button_values
from tests.mcp.test_server import stdio_hitl
from tests.support.poll import eventually

__all__ = ["stdio_hitl"]  # the fixture, used by name


async def test_ask_human_with_options_answers_the_option_clicked(
    stdio_hitl: Client, bot: Bot
) -> None:
    given = {"question": "Which branch?", "options": ["main", "release/2.1"]}
    call = asyncio.create_task(stdio_hitl.call_tool("ask_human", given))

    def card() -> Any:
        return next(
            (
                m
                for m in bot.emu.messages("#hitl-approvals")
                if "Which branch?" in all_text(m.blocks) and button_values(m.blocks)
            ),
            None,
        )

    m = await eventually(card, what="the question's card", timeout_s=15)
    assert f"{ACTION_OPTION}_1" in button_values(m.blocks)
    await bot.emu.click("UALICE", f"{ACTION_OPTION}_1", channel=m.channel, ts=m.ts)
    result = await asyncio.wait_for(call, 15)
    assert not result.is_error
    [block] = result.content
    assert isinstance(block, TextContent) and block.text == "release/2.1"
