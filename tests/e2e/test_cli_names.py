"""The operator's CLI names people as Slack does, where serve looked them up: a decision
clicked through the emulator, then `hitl-bot show` and `hitl-bot report` as processes."""

from __future__ import annotations

from pathlib import Path

from bot.core.states import State
from bot.slack.blocks import render
from tests.cli.test_cli import cli
from tests.e2e.conftest import Bot
from tests.support.poll import eventually


async def test_show_and_report_name_who_decided(bot: Bot, redis_url: str, tmp_path: Path) -> None:
    rid = await bot.propose("refund", {"amount": 40, "to": "cust-1"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved() -> bool:
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved, what="the click's approval")

    async def shown() -> str | None:
        code, out, err = await cli("show", rid, redis_url=redis_url)
        assert code == 0, err
        return out if "Alice Approver (UALICE)" in out else None

    out = await eventually(shown, what="show naming Alice")
    assert "requested by agent:test" in out  # no name known: the id, as it was
    page = tmp_path / "report.html"
    code, text, err = await cli("report", "--html", str(page), redis_url=redis_url)
    assert code == 0, err
    assert "Alice Approver (UALICE)" in text
    assert "Alice Approver (UALICE)" in page.read_text(encoding="utf-8")
