"""`hitl-bot report`, run as a real process against a history seeded in the test Valkey:
the table, the JSON and the HTML page show the same figures, and names are escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock, wall_ms
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store.requests import RequestStore
from tests.cli.test_cli import cli
from tests.store.test_fatigue import DAY, seed

EVIL = "<img src=x onerror=alert(1)>&"


@pytest.fixture
def clock() -> FakeClock:
    """Nine days back: the seeded history ends about a day before the report runs."""
    return FakeClock(wall_ms() - 9 * DAY)


async def _seeded(store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis) -> None:
    await seed(store, policy, clock, redis)
    req = (await store.create(policy, tool="deploy", args={"v": 2}, requester="UAGENT")).request
    clock.advance(60_000)
    d = Decision(event=Event.REJECT, actor=EVIL, payload_hash=req.payload_hash, reason_code="other")
    await store.transition(req.id, d)


async def test_report_prints_the_seeded_figures_as_json_and_table(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis, redis_url: str
) -> None:
    await _seeded(store, policy, clock, redis)
    code, out, err = await cli("report", "--since", "7d", "--json", redis_url=redis_url)
    assert code == 0, err
    medium = json.loads(out)["tiers"]["medium"]
    assert (medium["decisions"], medium["too_fast"], medium["median_s"]) == (3, 1, 10.0)
    assert medium["busiest"] == {"approver": "UANA", "share": 2 / 3}
    code, out, err = await cli("report", "--since", "7d", redis_url=redis_url)
    assert code == 0, err
    medium_row = next(line for line in out.splitlines() if "│ medium" in line)
    cells = [c.strip() for c in medium_row.split("│")[1:-1]]
    assert cells[:8] == ["medium", "3", "67%", "33%", "10.0 s", "30.0 s", "1 of 3", "UANA (67%)"]
    assert cells[9] == "1"  # auto_rejected: the one nobody answered
    assert EVIL in out  # printed as it is, never read as markup
    assert "UOLD" not in out  # a decision of the week before


async def test_report_writes_a_self_contained_html_page(
    store: RequestStore,
    policy: Policy,
    clock: FakeClock,
    redis: Redis,
    redis_url: str,
    tmp_path: Path,
) -> None:
    await _seeded(store, policy, clock, redis)
    page = tmp_path / "fatigue.html"
    code, _, err = await cli(
        "report", "--since", "14d", "--html", str(page), "--json", redis_url=redis_url
    )
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    # Two weeks: last week's UOLD joins the medium tier (4 decisions, UANA took 2)
    for figure in ("UANA (50%)", "10.0 s", "30.0 s", "1 of 4", "UOLD", "this week", "week -1"):
        assert figure in html
    assert "week -2" not in html  # two weeks asked, two weeks drawn
    assert html.count("<svg") == 2 and "<rect" in html
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;" in html and "<img" not in html
    assert "<script" not in html and not re.search(r"(src|href)=\"?https?:", html)


async def test_shot_the_html_report_opened_in_chromium(
    store: RequestStore,
    policy: Policy,
    clock: FakeClock,
    redis: Redis,
    redis_url: str,
    tmp_path: Path,
) -> None:
    """The page as a person opens it, offline: both charts drawn, the figures beside them
    (and the screenshot the docs show: fatigue-report.png)."""
    from playwright.async_api import async_playwright

    from tests.e2e.test_browser import ARGS, CHROMIUM
    from tests.support import chromium
    from tests.support.shots import keep

    chromium.require(str(CHROMIUM))
    await _seeded(store, policy, clock, redis)
    page_file = tmp_path / "fatigue.html"
    code, _, err = await cli(
        "report", "--since", "14d", "--html", str(page_file), redis_url=redis_url
    )
    assert code == 0, err
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1100, "height": 900})
            fetched: list[str] = []
            page.on("request", lambda r: fetched.append(r.url))
            await page.goto(page_file.as_uri())
            charts = page.locator("svg")
            assert await charts.count() == 2
            for i in range(2):
                box = await charts.nth(i).bounding_box()
                assert box is not None and box["width"] > 300 and box["height"] > 60
            text = await page.inner_text("body")
            assert "UANA (50%)" in text and EVIL in text  # shown as text, not markup
            assert fetched == [page_file.as_uri()]  # nothing else asked for
            await keep(page, "fatigue-report", tmp_path)
        finally:
            await browser.close()
