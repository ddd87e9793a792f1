"""The digest card in a real headless Chromium on the emulator's page, with the real bot
behind it: what a person reads on it, and "Approve all" clicked there. Keeps the docs'
screenshot (tests/support/shots.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.core.states import State
from bot.slack.batch import card
from tests.e2e.conftest import Bot, all_text
from tests.e2e.test_browser import CHROMIUM, browser_page, dom_id
from tests.support import chromium
from tests.support.poll import eventually
from tests.support.shots import keep

pytestmark = pytest.mark.timeout(60)
APPROVE_ALL = f"[data-testid=button-{card.ACTION_APPROVE_ALL}]"


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


async def test_shot_the_digest_card_approved_from_the_page(bot: Bot, tmp_path: Path) -> None:
    orders = [("ord-1042", 120), ("ord-1043", 480), ("ord-1051", 95), ("ord-1060", 310)]
    rids = []
    for order, amount in orders:
        bot.clock.advance(60_000)  # a minute apart: the digest lists them oldest first
        args = {"amount": amount, "currency": "USD", "order": order, "reason": "damaged"}
        rids.append(await bot.propose("refund", args, requester="billing-agent"))
    ch, _ = await bot.message_of(rids[0])

    async def digest() -> Any:
        for m in bot.emu.messages(ch):
            if "Approve all 4" in all_text(m.blocks):
                return m
        return None

    ts = (await eventually(digest, what="the digest of 4")).ts
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UALICE") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        message = page.locator(f"#msg-{dom_id(ts)}")
        await message.scroll_into_view_if_needed()
        text = await message.inner_text()
        assert "4 refund calls from billing-agent" in text and "1,005 USD in all" in text
        assert all(order in text for order, _ in orders)
        await keep(page, "batch-digest", tmp_path)

        await message.locator(APPROVE_ALL).click()  # the page accepts the confirm dialog

        async def approved() -> bool:
            return [(await bot.requests.get(r)).state for r in rids] == [State.APPROVED] * 4

        await eventually(approved, what="every refund approved")
        await page.get_by_text("Approved 4 of 4", exact=False).wait_for()
        await message.get_by_text("Fewer than three", exact=False).wait_for()
        assert await message.locator(APPROVE_ALL).count() == 0
