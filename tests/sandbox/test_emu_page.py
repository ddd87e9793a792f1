"""The page in a real headless Chromium: rendering, escaping, clicks, threads and modals.

Without Chromium they skip locally and fail under CI=true (tests/support/chromium.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient
from starlette.responses import JSONResponse, Response

from bot.sandbox.slack import SlackEmulator
from tests.e2e.test_browser import browser_page
from tests.sandbox.conftest import FakeBot, Received, actions, button
from tests.sandbox.test_emu_modals import reject_view
from tests.support import chromium
from tests.support.poll import eventually

CHROMIUM = chromium.find()


@pytest.fixture(autouse=True)
def _needs_chromium() -> None:
    chromium.require(CHROMIUM)


CONFIRM = {
    "title": {"type": "plain_text", "text": "Approve?"},
    "text": {"type": "mrkdwn", "text": "Refund 40 EUR"},
    "confirm": {"type": "plain_text", "text": "Yes"},
    "deny": {"type": "plain_text", "text": "No"},
}
SELECT = {
    "type": "static_select",
    "action_id": "reason",
    "placeholder": {"type": "plain_text", "text": "Why?"},
    "options": [{"text": {"type": "plain_text", "text": "Too risky"}, "value": "too_risky"}],
}
BLOCKS = [
    {"type": "header", "text": {"type": "plain_text", "text": "Refund 40 EUR?"}},
    {
        "type": "section",
        "text": {
            "type": "mrkdwn",
            "text": "*Tool* `refund` for <@UKID>: &lt;!channel&gt; &amp; raw <!channel>"
            '\n```{"amount": 40}```',
        },
        "fields": [
            {"type": "mrkdwn", "text": "*Expires*\n<!date^1900000000^{date_short} {time}|in 2030>"}
        ],
    },
    {"type": "context", "elements": [{"type": "mrkdwn", "text": "request `r1`"}]},
    {"type": "divider"},
    *actions(button("approve", "r1", style="primary", confirm=CONFIRM), button("reject"), SELECT),
]


async def test_a_person_in_the_browser(
    emulator: SlackEmulator, fake_bot: FakeBot, client: AsyncWebClient
) -> None:
    from playwright.async_api import async_playwright

    async def bot(received: Received) -> Response:
        payload = received.payload() if "payload" in received.form() else {}
        if (
            payload.get("type") == "block_actions"
            and payload["actions"][0]["action_id"] == "reject"
        ):
            await client.views_open(trigger_id=payload["trigger_id"], view=reject_view())
        if payload.get("type") == "view_submission":
            why = payload["view"]["state"]["values"]["why"]["text"]["value"]
            if why == "bad":
                return JSONResponse({"response_action": "errors", "errors": {"why": "Say more"}})
        return Response(status_code=200)

    fake_bot.behaviour = bot
    r = await client.chat_postMessage(channel="#hitl-approvals", text="Refund?", blocks=BLOCKS)
    ts, dom_ts = r["ts"], r["ts"].replace(".", "-")
    await client.chat_postMessage(channel="#hitl-approvals", text="details", thread_ts=ts)
    await client.chat_postEphemeral(channel="#hitl-approvals", user="UALICE", text="for alice")

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = await browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
        await page.goto(emulator.base_url + "/")
        await page.select_option("#act-as", "UALICE")
        message = page.locator(f"#msg-{dom_ts}")
        await message.wait_for()
        text = await message.inner_text()
        assert "<!channel> & raw @channel" in text and "@kid" in text
        assert await message.locator("[data-testid=broadcast]").count() == 1
        assert await message.locator(".mrkdwn b").first.inner_text() == "Tool"
        assert await message.locator("pre.code").inner_text() == '{"amount": 40}'
        assert await message.locator("time.date").get_attribute("title") == "in 2030"
        assert await page.locator("[data-testid=ephemeral]").inner_text() != ""

        await message.locator("[data-testid=button-approve]").click()
        await message.locator("[data-testid=select-reason]").select_option("too_risky")

        # What the bot received lasts; the page's status line is cleared by the next
        # refresh, which a busy machine can run before a wait on it looks.
        def kinds() -> list[tuple[str, Any]] | None:
            got = [
                (q["actions"][0]["action_id"], q["actions"][0].get("selected_option"))
                for q in fake_bot.payloads()
            ]
            return got if len(got) >= 2 else None

        got = await eventually(kinds, what="the click and the pick, delivered to the bot")
        assert got[0] == ("approve", None) and got[1][1]["value"] == "too_risky"

        await page.click(f"[data-testid='replies-{ts}']")
        await page.fill("#thread-composer", "only 20 & <b>not</b> @bob")
        await page.click("#thread-send")
        await page.locator("#thread [data-testid=message]").nth(2).wait_for()
        reply = emulator.replies("hitl-approvals", ts)[-1]
        assert reply.text == "only 20 &amp; &lt;b&gt;not&lt;/b&gt; <@UBOB>"

        await message.locator("[data-testid=button-reject]").click()
        await page.locator("#modal").wait_for(state="visible")
        await page.select_option("[data-testid=select-code]", "too_risky")
        await page.fill("[data-testid=input-text]", "bad")
        await page.click("#modal-submit")
        await page.locator("[data-testid=modal-error-why]").wait_for()
        await page.fill("[data-testid=input-text]", "too much for a kid")
        await page.click("#modal-submit")
        await page.locator("#modal").wait_for(state="hidden")
        submitted = fake_bot.payloads()[-1]["view"]["state"]["values"]
        assert submitted["reason"]["code"]["selected_option"]["value"] == "too_risky"

        await page.select_option("#act-as", "UBOB")
        await page.locator("[data-testid=ephemeral]").wait_for(state="detached")
        await browser.close()
    assert errors == []


# Records every text the message shows, in order, however the page redraws it.
WATCH = """(id) => {
  window.__seen = [];
  const look = () => {
    const el = document.getElementById(id);
    const text = el ? el.innerText : null;
    if (text !== null && window.__seen[window.__seen.length - 1] !== text) window.__seen.push(text);
  };
  const all = { childList: true, subtree: true, characterData: true };
  new MutationObserver(look).observe(document.body, all);
  look();
}"""


async def test_a_late_answer_to_an_earlier_poll_never_puts_an_old_card_back(
    emulator: SlackEmulator, client: AsyncWebClient, tmp_path: Path
) -> None:
    """The page's timer and a click each poll the emulator; the answer to the older poll
    can arrive last. Drawn, it showed the card as it was before the click until the next
    poll: a person (and a test) saw a decision come and go."""
    from playwright.async_api import Route

    words = ("first", "second", "third")
    r = await client.chat_postMessage(channel="#hitl-approvals", text=words[0])
    ts, dom_ts = r["ts"], r["ts"].replace(".", "-")
    async with browser_page(emulator.base_url + "/", tmp_path, "UALICE") as page:
        message = page.locator(f"#msg-{dom_ts}")
        await message.get_by_text(words[0]).wait_for()
        await page.evaluate(WATCH, f"msg-{dom_ts}")

        held: list[tuple[Route, Any]] = []

        async def hold_the_first(route: Route) -> None:
            if not held:
                held.append((route, await route.fetch()))  # the answer as it is now
            else:
                await route.continue_()

        await page.route("**/_emu/state", hold_the_first)
        await eventually(lambda: bool(held), what="a poll held with the old state")
        await client.chat_update(channel=r["channel"], ts=ts, text=words[1])
        await message.get_by_text(words[1]).wait_for()
        old_route, old_answer = held[0]
        await old_route.fulfill(response=old_answer)
        await client.chat_update(channel=r["channel"], ts=ts, text=words[2])
        await message.get_by_text(words[2]).wait_for()
        seen = [w for t in await page.evaluate("window.__seen") for w in words if w in t]
    assert seen == list(words), seen


async def test_a_redraw_between_press_and_release_does_not_lose_the_click(
    emulator: SlackEmulator, client: AsyncWebClient, tmp_path: Path
) -> None:
    """A click is a press and a release on one element; a poll that redrew the page in
    between replaced it, and the click reached nothing (a CI run lost a click on a
    thread link this way). The page redraws after the release instead."""
    r = await client.chat_postMessage(channel="#hitl-approvals", text="card")
    await client.chat_postMessage(channel="#hitl-approvals", text="detail", thread_ts=r["ts"])
    async with browser_page(emulator.base_url + "/", tmp_path, "UALICE") as page:
        await page.click("[data-testid=channel-hitl-approvals]")
        link = page.locator(f"[data-testid='replies-{r['ts']}']")
        await link.hover()
        await page.mouse.down()
        await client.chat_postMessage(channel="#hitl-approvals", text="news while pressed")
        await page.evaluate("poll(true)")  # answered and applied while the button is down
        assert await page.evaluate("S.version") == emulator.workspace.version
        await page.mouse.up()
        await page.locator("#thread").get_by_text("detail").wait_for()
        await page.get_by_text("news while pressed").wait_for()  # and the redraw came
