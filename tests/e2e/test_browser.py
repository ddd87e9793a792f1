"""A person in a real headless Chromium, on the emulator's page, with the real bot behind it.

Without /usr/bin/chromium they skip locally and fail under CI=true (tests/support/chromium.py).
A failing test leaves a screenshot, failure.png, in its tmp_path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bot.core.models import RunState
from bot.core.states import State
from bot.slack.blocks import render
from tests.e2e.conftest import Agents, Bot, all_text, button_values
from tests.support import chromium
from tests.support.poll import eventually

if TYPE_CHECKING:
    from playwright.async_api import Page

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APPROVE = f"[data-testid=button-{render.ACTION_APPROVE}]"

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


def dom_id(ts: str) -> str:
    return ts.replace(".", "-")


@contextlib.asynccontextmanager
async def browser_page(url: str, tmp_path: Path, user: str) -> AsyncIterator[Page]:
    """The page at `url`, acting as `user`; screenshot on failure, no page errors allowed.
    Without Chromium: skipped locally, failed under CI=true, whichever module asks."""
    chromium.require(str(CHROMIUM))
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = await browser.new_page()
            page.set_default_timeout(15_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
            await page.goto(url)
            await page.select_option("#act-as", user)
            try:
                yield page
            except BaseException:
                with contextlib.suppress(Exception):
                    await page.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
                raise
            assert errors == []
        finally:
            await browser.close()


async def test_approve_click_in_the_page_reaches_the_store(bot: Bot, tmp_path: Path) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    _, ts = await bot.message_of(rid)

    async with browser_page(bot.emu.base_url + "/", tmp_path, "UKID") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        message = page.locator(f"#msg-{dom_id(ts)}")
        await message.locator(APPROVE).click()

        async def approved() -> Any:
            req = await bot.requests.get(rid)
            return req if req.state == State.APPROVED else None

        req = await eventually(approved)
        assert req.approvals[0].actor == "UKID"
        # The bot rewrote the message: the page shows it decided, without buttons.
        # Not the buttons going: the page redraws a message on every change.
        await eventually(message.inner_text, lambda text: "Approved" in text, what="Approved")
        assert await message.locator("[data-action-id]").count() == 0  # no interactive element


async def test_a_whole_run_from_the_page(bot: Bot, agents: Agents, tmp_path: Path) -> None:
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UKID") as page:
        await page.click("[data-testid=channel-general]")
        # The page turns @names into Slack's <@U...> mentions, as Slack's client does.
        await page.fill("#composer", "@hitl-bot Get me the bear!")
        await page.press("#composer", "Enter")

        asked = await eventually(lambda: _first(bot.emu.messages("general")))
        assert asked.text == "<@UBOT> Get me the bear!" and asked.user == "UKID"
        run_id = await eventually(lambda: bot.runs.by_thread("CGENERAL", asked.ts))
        await page.click(f"#replies-{dom_id(asked.ts)}")
        thread = page.locator("#thread")
        await thread.get_by_text("Is this the one?", exact=False).wait_for()
        await page.fill("#thread-composer", "yes")
        await page.press("#thread-composer", "Enter")

        # The card is where the policy reviews it; the run's thread links to it.
        approval = await eventually(lambda: _approval(bot), timeout_s=15)
        await thread.get_by_text("waits for review", exact=False).wait_for()
        # The kid asked, so a grown-up decides: the page switches to the parent.
        await page.select_option("#act-as", "UPARENT")
        await page.click("[data-testid=channel-hitl-approvals]")
        card = page.locator(f"#msg-{dom_id(approval.ts)}")
        await card.locator(APPROVE).click()
        await card.locator(APPROVE).wait_for(state="detached")
        assert "drop_claw" in await card.inner_text()
        await page.click("[data-testid=channel-general]")
        await page.click(f"#replies-{dom_id(asked.ts)}")
        await thread.get_by_text("Got it! Here is your bear.", exact=False).first.wait_for()

    async def finished() -> Any:
        run = await bot.runs.get(run_id)
        return run if run.state == RunState.FINISHED else None

    run = await eventually(finished)
    assert run.result == "Got it! Here is your bear."


async def _first(messages: list[Any]) -> Any:
    return messages[0] if messages else None


async def _approval(bot: Bot) -> Any:
    found = [
        m
        for m in bot.emu.messages("hitl-approvals")
        if render.ACTION_APPROVE in button_values(m.blocks) and "drop_claw" in all_text(m.blocks)
    ]
    return found[-1] if found else None


async def test_the_edit_box_in_the_page_shows_the_current_arguments(
    bot: Bot, tmp_path: Path
) -> None:
    rid = await bot.propose("refund", {"amount": 250, "to": "cust-42"})
    _, ts = await bot.message_of(rid)

    async with browser_page(bot.emu.base_url + "/", tmp_path, "UALICE") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        message = page.locator(f"#msg-{dom_id(ts)}")
        await message.locator(f"[data-testid=button-{render.ACTION_EDIT}]").click()
        box = page.locator(f"#modal [data-testid=input-{render.ARGS_ACTION}]")
        await box.wait_for()
        # The bot sends the arguments as the box's initial_value; Slack shows them there.
        assert json.loads(await box.input_value()) == {"amount": 250, "to": "cust-42"}
        await box.fill('{"amount": 25, "to": "cust-42"}')
        await page.click("#modal-submit")
        await page.locator("#modal").wait_for(state="hidden")

    async def edited() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == State.APPROVED else None

    assert (await eventually(edited)).args == {"amount": 25, "to": "cust-42"}
