"""What a person sees on the emulator's page, in a real headless Chromium with
the real bot behind it: where the page opens, a new card in view, reactions as emoji, the
reject modal, the status bar and dates. Each test keeps a screenshot, looks.png, in its
tmp_path for a person to look at.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.demo import messages as demo_say
from bot.slack.blocks import render
from tests.e2e.conftest import TOKEN, Bot
from tests.e2e.test_browser import APPROVE, ARGS, CHROMIUM, browser_page, dom_id
from tests.support.poll import eventually

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

pytestmark = pytest.mark.timeout(60)
RAW_TS = re.compile(r"\d{10}\.\d{6}")


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    from tests.support import chromium

    chromium.require(str(CHROMIUM))


@contextlib.asynccontextmanager
async def fresh_page(url: str, tmp_path: Path) -> AsyncIterator[Page]:
    """The page as a first visit shows it: nobody picked in "Act as" yet."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(15_000)
            await page.goto(url)
            try:
                yield page
            finally:
                with contextlib.suppress(Exception):
                    await page.screenshot(path=str(tmp_path / "looks.png"))
        finally:
            await browser.close()


async def inside(item: Locator, pane: Locator) -> bool:
    """Whether `item` shows whole inside the visible part of the scrolling `pane`."""
    a, b = await item.bounding_box(), await pane.bounding_box()
    assert a is not None and b is not None
    return a["y"] >= b["y"] - 1 and a["y"] + a["height"] <= b["y"] + b["height"] + 1


async def test_the_demo_opens_where_its_banner_says_to_start(bot: Bot, tmp_path: Path) -> None:
    bot.emu.workspace.opening = dict(demo_say.OPENING["claw"])
    async with fresh_page(bot.emu.base_url + "/", tmp_path) as page:
        await page.locator("#hint").wait_for()
        assert await page.input_value("#act-as") == "UKID"
        assert await page.inner_text("#channel-header") == "# general"
        assert "You are kid in #general" in await page.inner_text("#hint")
        assert await page.input_value("#composer") == "@hitl-bot Get me the bear!"
        # "Press Enter" works as the hint says, with no click in the box first.
        assert await page.evaluate("document.activeElement.id") == "composer"
        await page.keyboard.press("Enter")

        async def sent() -> Any:
            mine = bot.emu.messages("general")
            return mine[0] if mine else None

        assert (await eventually(sent)).text == "<@UBOT> Get me the bear!"
        # The status bar never shows a raw Slack timestamp.
        assert not RAW_TS.search(await page.inner_text("#status"))
        # The hint's step is done: it goes, rather than tell a later person to press Enter.
        await page.locator("#hint").wait_for(state="hidden")
        # Switched to the parent, a reload keeps the parent: the opening is for arriving.
        await page.select_option("#act-as", "UPARENT")
        await page.reload()
        await page.locator("#act-as option").first.wait_for(state="attached")
        assert await page.input_value("#act-as") == "UPARENT"
        assert await page.locator("#hint").is_hidden()


async def test_a_story_button_posts_its_messages_as_its_person(bot: Bot, tmp_path: Path) -> None:
    bot.emu.workspace.opening = dict(demo_say.OPENING["refunds"])
    story = demo_say.OPENING["refunds"]["stories"][0]
    async with fresh_page(bot.emu.base_url + "/", tmp_path) as page:
        await page.select_option("#act-as", "UALICE")  # whoever the person is acting as
        await page.get_by_role("button", name=story["label"]).click()

        async def sent() -> Any:
            mine = bot.emu.messages("general")
            return mine if len(mine) == len(story["texts"]) else None

        posted = await eventually(sent, what="the story's messages")
        assert [(m.user, m.text) for m in posted] == [("UCAROL", t) for t in story["texts"]]
        # The page shows where the story happens, as the person it happens to.
        await eventually(lambda: page.input_value("#act-as"), ok=lambda v: v == "UCAROL")
        assert await page.inner_text("#channel-header") == "# general"


async def test_a_new_card_in_the_thread_is_scrolled_into_view(bot: Bot, tmp_path: Path) -> None:
    # A run in the review channel keeps its cards in its own thread.
    home = await bot.emu.post("UKID", "#hitl-approvals", "a long thread")
    for i in range(30):
        await bot.emu.post("UKID", "#hitl-approvals", f"filler {i}", thread_ts=home.ts)
    run = await bot.runs.start(
        agent="claw", prompt="bear", requester="UKID", channel=home.channel, thread_ts=home.ts
    )
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UPARENT") as page:
        await page.set_viewport_size({"width": 1280, "height": 600})
        await page.click("[data-testid=channel-hitl-approvals]")
        await page.click(f"#replies-{dom_id(home.ts)}")
        pane = page.locator("#thread-messages")
        await pane.get_by_text("filler 29").wait_for()
        await pane.evaluate("box => { box.scrollTop = 0; }")  # reading the thread's start
        rid = await bot.propose("drop_claw", {"target": "bear"}, run_id=run.id)
        _, ts = await bot.message_of(rid)
        button = page.locator(f"#thread-msg-{dom_id(ts)} {APPROVE}")
        await button.wait_for()

        async def shown() -> bool | None:
            return await inside(button, pane) or None

        await eventually(shown)
        await page.screenshot(path=str(tmp_path / "looks.png"))


# Whether this browser paints a color emoji (the page's own test, done independently).
EMOJI_FONT = """() => {
  const c = document.createElement("canvas"); c.width = c.height = 24;
  const g = c.getContext("2d"); g.textBaseline = "top"; g.font = "20px sans-serif";
  g.fillText("\\u{1F534}", 0, 0);
  const d = g.getImageData(0, 0, 24, 24).data;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] > 150 && d[i + 1] < 90 && d[i + 2] < 90) return true;
  }
  return false;
}"""


async def test_reactions_show_as_emoji(bot: Bot, tmp_path: Path) -> None:
    posted = await bot.emu.post("UKID", "#general", "react to me")
    client = AsyncWebClient(token=TOKEN, base_url=bot.emu.api_url)
    await client.reactions_add(channel=posted.channel, timestamp=posted.ts, name="eyes")
    await client.reactions_add(channel=posted.channel, timestamp=posted.ts, name="white_check_mark")
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UKID") as page:
        await page.click("[data-testid=channel-general]")
        message = page.locator(f"#msg-{dom_id(posted.ts)}")
        done = message.locator("[data-testid=reaction-white_check_mark]")
        await done.wait_for()
        # An emoji where the browser has a font for them; a word where it would draw a box.
        font = await page.evaluate(EMOJI_FONT)
        eyes = message.locator("[data-testid=reaction-eyes]")
        if font:
            assert await done.inner_text() == "✅ 1" and await eyes.inner_text() == "👀 1"
        else:
            assert await done.inner_text() == "[done] 1" and await eyes.inner_text() == "[seen] 1"
        assert ":white_check_mark:" not in await message.inner_text()
        await page.screenshot(path=str(tmp_path / "looks.png"))


async def test_the_reject_modal_reads_right(bot: Bot, tmp_path: Path) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    _, ts = await bot.message_of(rid)
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UPARENT") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        card = page.locator(f"#msg-{dom_id(ts)}")
        await card.locator(f"[data-testid=button-{render.ACTION_REJECT}]").click()
        modal = page.locator("#modal")
        await modal.get_by_text("Tell the agent more").wait_for()
        text = await modal.inner_text()
        assert text.count("(optional)") == 1, text
        assert await page.inner_text("#modal-submit") == "Send rejection"
        await page.screenshot(path=str(tmp_path / "looks.png"))


async def test_decided_cards_read_dates_as_slack_shows_them(bot: Bot, tmp_path: Path) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    _, ts = await bot.message_of(rid)
    async with browser_page(bot.emu.base_url + "/", tmp_path, "UPARENT") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        card = page.locator(f"#msg-{dom_id(ts)}")
        await card.locator(APPROVE).click()
        # The page redraws a message on every change: wait for the card's words.
        text = await eventually(card.inner_text, lambda t: "Approved by" in t, what="Approved by")
        # "{date_short_pretty} at {time}" opens the date: Slack writes "Today at 9:41 AM".
        assert re.search(r"Approved by @parent · Today at \d{1,2}:\d\d [AP]M", text), text
        assert not re.search(r"\bat (today|Today)\b", text), text
        assert not RAW_TS.search(await page.inner_text("#status"))
        await page.screenshot(path=str(tmp_path / "looks.png"))


async def test_the_hint_goes_for_another_person_and_any_card_opens_as_a_thread(
    bot: Bot, tmp_path: Path
) -> None:
    bot.emu.workspace.opening = dict(demo_say.OPENING["claw"])
    rid = await bot.propose("drop_claw", {"target": "bear"})  # an API card: no replies yet
    _, ts = await bot.message_of(rid)
    async with fresh_page(bot.emu.base_url + "/", tmp_path) as page:
        await page.locator("#hint").wait_for()
        await page.select_option("#act-as", "UPARENT")
        await page.locator("#hint").wait_for(state="hidden")  # it spoke to kid in #general
        assert await page.input_value("#composer") == ""  # and its draft was kid's words

        await page.click("[data-testid=channel-hitl-approvals]")
        opener = page.locator(f"#replies-{dom_id(ts)}")
        assert await opener.inner_text() == "Reply in thread"
        await opener.click()
        await page.fill("#thread-composer", "approve")
        await page.press("#thread-composer", "Enter")

        async def decided() -> Any:
            req = await bot.requests.get(rid)
            return req if req.state.value != "pending_review" else None

        req = await eventually(decided, what="the card decided by the thread reply")
        assert req.state.value == "approved" and req.resolution is not None
        assert req.resolution.actor == "UPARENT"
        await page.screenshot(path=str(tmp_path / "thread-reply.png"))
