"""A question with options on the emulator's page, in a real headless Chromium: the card
shows one button per option, a click there answers it, and the card then names who chose
what. Keeps the docs' screenshot of such a card (tests/support/shots.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.models import QuestionState
from bot.slack.blocks.options import ACTION_OPTION
from tests.e2e.conftest import Bot, all_text
from tests.e2e.test_browser import CHROMIUM, browser_page, dom_id
from tests.support import chromium
from tests.support.poll import eventually
from tests.support.shots import keep

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(str(CHROMIUM))


async def test_shot_a_question_with_options_is_answered_by_a_click(
    bot: Bot, tmp_path: Path
) -> None:
    options = ["Refund order A-1042 (42.50 EUR)", "Refund order A-1077 (19.90 EUR)", "Neither"]
    async with httpx.AsyncClient(
        base_url=bot.url, headers={"Authorization": "Bearer api-token-0123456789"}
    ) as api:
        q = (
            await api.post(
                "/v1/questions",
                json={
                    "question": "The customer says they were charged twice. Which order do "
                    "I refund?",
                    "options": options,
                },
            )
        ).json()

    def card() -> Any:
        return next(
            (m for m in bot.emu.messages("#hitl-approvals") if q["id"] in all_text(m.blocks)),
            None,
        )

    ts = (await eventually(card, what="the question's card")).ts
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UALICE") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        message = page.locator(f"#msg-{dom_id(ts)}")
        buttons = message.locator("[data-action-id]")
        await buttons.first.wait_for()
        assert [t.strip() for t in await buttons.all_inner_texts()] == options
        await keep(page, "question-options", tmp_path)
        await message.locator(f"[data-testid=button-{ACTION_OPTION}_0]").click()

        async def answered() -> Any:
            got = await bot.questions.get(q["id"])
            return got if got.state == QuestionState.ANSWERED else None

        got = await eventually(answered, what="the question answered from the page")
        assert (got.answer, got.answered_by) == (options[0], "UALICE")
        # The page redraws a message on every change in the workspace, so the old
        # buttons going is no sign the card was updated yet: wait for its words.
        shown = await eventually(
            message.inner_text,
            lambda text: "Answered by @alice" in text,
            what="the card saying who answered",
        )
        assert options[0] in shown and await buttons.count() == 0
