"""The fatigue messages as the operator reads them in their direct messages, in a real
headless Chromium on the emulator's page (and the screenshot the docs show:
fatigue-signal.png)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Bot
from tests.e2e.test_browser import CHROMIUM, browser_page
from tests.e2e.test_fatigue_signals import OPERATOR, three_signals, told
from tests.e2e.test_fatigue_signals import operators as operators  # the policy names Carol
from tests.e2e.test_fatigue_signals import serve_env as serve_env  # checks every 50 ms
from tests.support import chromium
from tests.support.poll import eventually
from tests.support.shots import keep

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


async def test_shot_the_operator_reads_the_fatigue_signals(bot: Bot, tmp_path: Path) -> None:
    await three_signals(bot)

    async def three() -> bool:
        return len(told(bot)) >= 3

    await eventually(three, what="three fatigue messages")
    async with browser_page(bot.emu.base_url + "/", tmp_path, OPERATOR) as page:
        await page.click("[data-testid=channel-dm]")
        await page.get_by_text("took 10 of the 10 decisions").wait_for()
        shown = await page.inner_text("#messages")
        assert shown.count("What to do") == 3
        assert "@alice decided 10 of their last 10 requests" in shown
        await keep(page, "fatigue-signal", tmp_path)
