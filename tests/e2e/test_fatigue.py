"""Approval-fatigue signals through the real bot and the Slack emulator: /metrics counts
decisions by tier and outcome as they happen, times them from the card, flags the ones
too fast to have read the card; the Grafana dashboard reads only series /metrics has;
the App Home shows the week's figures to operators and to nobody else."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.states import State
from bot.slack.blocks import render
from bot.store import keys
from tests.e2e.conftest import POLICY, Bot
from tests.support.poll import eventually

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "hitl-bot.json"
OPERATOR = "UCAROL"


@pytest.fixture(autouse=True)
def operators(monkeypatch: pytest.MonkeyPatch) -> None:
    """Carol is the policy's operator (autouse: set before the bot reads the policy)."""
    monkeypatch.setitem(POLICY, "operators", [OPERATOR])


async def _state(bot: Bot, rid: str, want: State, level: int | None = None) -> None:
    async def probe() -> bool:
        req = await bot.requests.get(rid)
        return req.state == want and (level is None or req.level == level)

    await eventually(probe, what=f"{rid} {want}")


async def _approve(bot: Bot, rid: str, user: str, after_ms: int = 0) -> None:
    ch, ts = await bot.message_of(rid)
    bot.clock.advance(after_ms)  # the person reads the card this long
    out = await bot.emu.click(user, render.ACTION_APPROVE, channel=ch, ts=ts)
    assert out.status == 200
    await _state(bot, rid, State.APPROVED)


async def _history(bot: Bot) -> None:
    """Medium: Alice approves the moment the card shows (too fast), Bob after 30 s, one
    nobody answers ends auto-rejected; low: a call the policy lets through unreviewed."""
    await _approve(bot, await bot.propose("refund", {"amount": 5}), "UALICE")
    await _approve(bot, await bot.propose("refund", {"amount": 6}), "UBOB", after_ms=30_000)
    left = await bot.propose("refund", {"amount": 7})
    await bot.message_of(left)
    bot.clock.advance(11 * 60_000)
    await _state(bot, left, State.PENDING_REVIEW, level=1)
    bot.clock.advance(60 * 60_000)
    await _state(bot, left, State.AUTO_REJECTED)
    await bot.propose("move_claw", {"x": 1})


async def _metrics(bot: Bot) -> str:
    async with httpx.AsyncClient() as http:
        resp = await http.get(bot.url + "/metrics")
    assert resp.status_code == 200
    return resp.text


async def test_metrics_count_fatigue_by_tier_as_decisions_happen(bot: Bot) -> None:
    await _history(bot)
    want = [
        'hitl_tier_decisions_total{outcome="approved",tier="medium"} 2',
        'hitl_tier_decisions_total{outcome="auto_rejected",tier="medium"} 1',
        'hitl_tier_decisions_total{outcome="no_review",tier="low"} 1',
        'hitl_too_fast_decisions_total{tier="medium"} 1',
        'hitl_card_decision_seconds_bucket{le="1",tier="medium"} 1',
        'hitl_card_decision_seconds_bucket{le="30",tier="medium"} 2',
        'hitl_card_decision_seconds_bucket{le="+Inf",tier="medium"} 2',
        'hitl_card_decision_seconds_count{tier="medium"} 2',
        'hitl_card_decision_seconds_sum{tier="medium"} 30.0',
        "# TYPE hitl_card_decision_seconds histogram",
    ]

    async def counted() -> str | None:
        text = await _metrics(bot)
        return text if all(line in text.splitlines() for line in want) else None

    text = await eventually(counted, what="the fatigue series")
    assert "UALICE" not in text and "UBOB" not in text  # no per-approver labels


def _series(text: str) -> set[str]:
    return {re.split(r"[{ ]", line, maxsplit=1)[0] for line in text.splitlines() if line[:1] != "#"}


async def test_every_series_the_grafana_dashboard_reads_is_exported(bot: Bot) -> None:
    await _history(bot)

    async def exported() -> set[str] | None:
        got = _series(await _metrics(bot))
        return got if "hitl_too_fast_decisions_total" in got else None

    names = await eventually(exported, what="the fatigue series")
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert len(exprs) >= 8
    used = {n for e in exprs for n in re.findall(r"\bhitl_[a-z0-9_]+", e)}
    assert {"hitl_card_decision_seconds_bucket", "hitl_tier_decisions_total"} <= used
    assert used <= names, used - names


def _blocks(bot: Bot, user: str) -> list[dict[str, Any]]:
    view = bot.emu.home_view(user)
    return list(view.definition["blocks"]) if view is not None else []


async def _home(bot: Bot, user: str) -> list[dict[str, Any]]:
    await bot.emu.open_home(user)
    return await eventually(lambda: _blocks(bot, user) or None, what=f"{user}'s App Home")


async def test_the_app_home_shows_the_weeks_figures_to_operators_only(bot: Bot) -> None:
    await _history(bot)
    shown = {b.get("block_id"): b for b in await _home(bot, OPERATOR)}
    medium = shown["hitl_fatigue_medium"]["text"]["text"]
    assert "*medium* · 2 by people · approved 100% · rejected 0%" in medium
    assert "median 0.0 s, p90 30.0 s · too fast: 1 of 2" in medium  # nearest rank
    assert "Busiest approver: <@UALICE> (50%)" in medium
    assert "1 auto-rejected" in medium and "<@UBOB>: 1 · median 30.0 s · 0 too fast" in medium
    assert "1 without review" in shown["hitl_fatigue_low"]["text"]["text"]
    assert "hitl_fatigue_foot" in shown
    others = {b.get("block_id") for b in await _home(bot, "UALICE")}
    assert "hitl_policy_head" in others  # her App Home, drawn whole
    assert not any(str(b).startswith("hitl_fatigue") for b in others)


async def test_a_damaged_history_leaves_the_rest_of_the_app_home(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 5})
    await _approve(bot, rid, "UALICE")
    await bot.redis.lset(keys.audit(rid), 0, "not json")
    waiting = await bot.propose("refund", {"amount": 6})
    await bot.message_of(waiting)
    shown = {b.get("block_id"): b for b in await _home(bot, OPERATOR)}
    assert "hitl_fatigue_failed" in shown
    assert waiting in json.dumps(list(shown.values()))  # what waits for her still shows
