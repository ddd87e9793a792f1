"""The operators' panel on the App Home, as an operator sees it in a real headless
Chromium on the emulator's page (and the screenshot the docs show: fatigue-home.png)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.slack.blocks import home_messages as hmsg
from tests.e2e.conftest import Bot
from tests.e2e.test_browser import CHROMIUM, browser_page
from tests.e2e.test_fatigue import OPERATOR, _approve, _history
from tests.e2e.test_fatigue import operators as operators  # the policy names Carol
from tests.support import chromium
from tests.support.shots import keep

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


async def test_shot_an_operator_reads_the_weeks_fatigue_on_the_app_home(
    bot: Bot, tmp_path: Path
) -> None:
    await _history(bot)
    await _approve(bot, await bot.propose("refund", {"amount": 9, "to": "c-7"}), "UALICE", 2_000)
    deploy = await bot.propose("deploy", {"service": "api", "version": "2.4.1"})
    await bot.message_of(deploy)
    async with browser_page(bot.emu.base_url + "/", tmp_path, OPERATOR) as page:
        await page.click("[data-testid=app-home]")
        head = page.get_by_text(hmsg.FATIGUE_HEAD.split(" ", 1)[1])  # the emoji may be a word
        medium = page.get_by_text("medium · 3 by people")
        await medium.wait_for()
        shown = await page.inner_text("#messages")
        assert "median 2.0 s, p90 30.0 s · too fast: 2 of 3" in shown
        assert "Busiest approver: @alice (67%)" in shown and "1 auto-rejected" in shown
        assert "low · no decision by people" in shown and "1 without review" in shown
        await head.evaluate("e => e.scrollIntoView({block: 'start'})")
        await keep(page, "fatigue-home", tmp_path)
