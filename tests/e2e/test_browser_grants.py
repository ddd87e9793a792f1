"""Standing approvals as a person sees them on the emulator's page, in a real headless
Chromium with the real bot behind it: the card's "Approve and allow similar" button, its
dialog, and then the grant's line on the card and the note of a call it passed. Kept as
docs/img/grant-dialog.png and docs/img/grant-note.png (tests/support/shots.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.states import State
from bot.slack.grants.card import ACTION_GRANT, ACTION_REVOKE
from tests.e2e.conftest import Bot
from tests.e2e.test_browser import browser_page, dom_id
from tests.e2e.test_slack_grants import standing_policy
from tests.support.poll import eventually
from tests.support.shots import keep

__all__ = ["standing_policy"]  # the autouse fixture: medium allows standing approvals

pytestmark = pytest.mark.timeout(60)


async def test_shot_the_grant_dialog_and_the_note_of_a_passed_call(
    bot: Bot, tmp_path: Path
) -> None:
    rid = await bot.propose("refund", {"amount": 50, "currency": "EUR", "to": "cust-1"})
    _, ts = await bot.message_of(rid)
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UKID") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        card = page.locator(f"#msg-{dom_id(ts)}")
        await card.locator(f"[data-testid=button-{ACTION_GRANT}]").click()
        modal = page.locator("#modal")
        await modal.get_by_text("Must be exactly as approved").wait_for()
        text = await modal.inner_text()
        assert "amount: from" in text and "amount: up to" in text
        assert "cust-1" in text and "EUR" in text
        assert await page.inner_text("#modal-submit") == "Approve and allow"
        await keep(page, "grant-dialog", tmp_path)

        await page.click("#modal-submit")
        await card.locator(f"[data-testid=button-{ACTION_REVOKE}]").wait_for()
        assert "Standing approval" in await card.inner_text()

        later = await bot.propose("refund", {"amount": 30, "currency": "EUR", "to": "cust-1"})

        async def approved() -> bool:
            return (await bot.requests.get(later)).state == State.APPROVED

        await eventually(approved, what="the second refund passed under the grant")
        note = page.get_by_text("passed under standing approval")
        await note.wait_for()
        await note.scroll_into_view_if_needed()
        await keep(page, "grant-note", tmp_path)
