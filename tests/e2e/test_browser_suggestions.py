"""The policy suggestions on the operators' App Home, as an operator reads them in a real
headless Chromium on the emulator's page (and the screenshot the docs show:
suggestions-home.png)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.states import Event
from bot.slack.blocks import home_messages as hmsg
from tests.e2e.conftest import Bot
from tests.e2e.test_browser import CHROMIUM, browser_page
from tests.e2e.test_suggestions_home import GROUPS, OPERATOR, mined_next_hour, month, refunds
from tests.e2e.test_suggestions_home import operators as operators  # the policy names Carol
from tests.e2e.test_suggestions_home import serve_env as serve_env  # checks every 50 ms
from tests.support import chromium
from tests.support.month import SEC
from tests.support.shots import keep

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


async def test_shot_an_operator_reads_the_policy_suggestions(bot: Bot, tmp_path: Path) -> None:
    m = month(bot)
    m.gap_min = (1, 5)  # a few hours of calls: mined today
    await refunds(m, 30)
    for i in range(24):  # deletions: the big ones rejected
        rows = 50 * (i + 1)
        event = Event.REJECT if rows >= 800 else Event.APPROVE
        await m.call("drop", "drop_claw", "claw-agent", {"rows": rows}, event, "UBOB",
                     20 * SEC, groups=GROUPS)  # fmt: skip
    await mined_next_hour(bot)
    async with browser_page(bot.emu.base_url + "/", tmp_path, OPERATOR) as page:
        await page.click("[data-testid=app-home]")
        head = page.get_by_text(hmsg.SUGGEST_HEAD.split(" ", 1)[1])  # the emoji may be a word
        await page.get_by_text("hitl-bot policy apply fragment.yml --by NAME").wait_for()
        shown = await page.inner_text("#messages")
        assert "refund by billing-agent (medium): run without review inside amount" in shown
        assert "Evidence: 30 approved, median" in shown
        assert "drop_claw by claw-agent (medium): review at high from rows 800 up" in shown
        await head.evaluate("e => e.scrollIntoView({block: 'start'})")
        await keep(page, "suggestions-home", tmp_path)
