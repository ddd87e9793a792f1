"""A proposal on the emulator's page, in a real headless Chromium: every candidate shown
with its Choose button, a click there approves that one, and the card then marks it
chosen. Keeps the docs' screenshot of a proposal card (tests/support/shots.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.states import State
from bot.slack.blocks.proposals import ACTION_CHOOSE
from tests.e2e.conftest import Bot
from tests.e2e.test_browser import CHROMIUM, browser_page, dom_id
from tests.support import chromium
from tests.support.poll import eventually
from tests.support.shots import keep

pytestmark = pytest.mark.timeout(60)

CANDS = [
    {"order": "A-1042", "amount": 42.5, "currency": "EUR", "reason": "charged twice"},
    {"order": "A-1077", "amount": 19.9, "currency": "EUR", "reason": "late parcel"},
]


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


async def test_shot_a_proposal_is_chosen_from_the_page(bot: Bot, tmp_path: Path) -> None:
    async with httpx.AsyncClient(
        base_url=bot.url, headers={"Authorization": "Bearer api-token-0123456789"}
    ) as api:
        made = await api.post("/v1/approvals", json={"tool": "refund", "candidates": CANDS})
    rid = made.json()["id"]
    _, ts = await bot.message_of(rid)
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UALICE") as page:
        await page.set_viewport_size({"width": 1280, "height": 900})
        await page.click("[data-testid=channel-hitl-approvals]")
        message = page.locator(f"#msg-{dom_id(ts)}")
        second = message.locator(f"[data-testid=button-{ACTION_CHOOSE}_1]")
        await second.wait_for()
        shown = await message.inner_text()
        assert "A-1042" in shown and "A-1077" in shown and "Reject" in shown
        await keep(page, "proposal-card", tmp_path)
        await second.click()

        async def approved() -> Any:
            req = await bot.requests.get(rid)
            return req if req.state == State.APPROVED else None

        req = await eventually(approved, what="the proposal approved from the page")
        assert req.args == CANDS[1] and req.resolution is not None
        assert req.resolution.actor == "UALICE"
        await second.wait_for(state="detached")
        # The page redraws a message on every change: wait for the card's words.
        await eventually(message.inner_text, lambda text: "chosen" in text, what="chosen")
