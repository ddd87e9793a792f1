"""Policy suggestions on the operators' App Home, through the real bot and the Slack
emulator. A month is seeded through the store as the suggest tests seed it
(tests/support/month.py), on the bot's own clock; serve's fatigue check mines the last
30 days once an hour and keeps a summary. An operator's App Home shows each suggestion
with its evidence, its effect and the commands that write and apply the fragment (and
those commands do that); a healthy month says there is nothing to suggest; nobody else
sees any of it; and the summary is mined again the next hour, never on opening the tab."""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.store import keys
from bot.store.figures.fatigue_told import FatigueTold
from tests.cli.test_cli import cli
from tests.e2e.conftest import POLICY, Bot
from tests.e2e.test_fatigue_signals import _a_check_after_now
from tests.support.month import SEC, Month
from tests.support.poll import eventually

OPERATOR = "UCAROL"
HOUR = 3_600_000
EVIL = "<!channel> wipe"  # a tool an agent named: shown literally, never a broadcast
GROUPS = ("#hitl-approvals",)
Blocks = dict[str | None, dict[str, Any]]


@pytest.fixture(autouse=True)
def operators(monkeypatch: pytest.MonkeyPatch) -> None:
    """Carol is the policy's only operator (set before the bot reads the policy)."""
    monkeypatch.setitem(POLICY, "operators", [OPERATOR])


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_fatigue_check_s": 0.05}


def month(bot: Bot) -> Month:
    """Calls on the bot's clock, so its sweeper sees each decided before its timeout."""
    return Month(bot.redis, parse_policy(POLICY), clock=bot.clock)


async def refunds(m: Month, n: int, wait_s: tuple[int, int] = (2, 20)) -> list[int]:
    """`n` small refunds by billing-agent, approved as asked `wait_s` seconds in; the
    waits."""
    r = m.rng
    for _ in range(n):
        args = {"amount": r.randint(2, 48), "currency": r.choice(["USD", "EUR"])}
        await m.call("refund", "refund", "billing-agent", args, Event.APPROVE,
                     r.choice(["UALICE", "UBOB"]), r.randint(*wait_s) * SEC,
                     groups=GROUPS)  # fmt: skip
    return m.seen.waits["refund"]


async def mined_next_hour(bot: Bot) -> None:
    """Move the bot's clock into the next hour and wait for a whole fatigue check that
    began there: that hour's mining is kept."""
    bot.clock.advance(HOUR - bot.clock() % HOUR + SEC)
    after = bot.clock()
    marks = FatigueTold(bot.redis)

    async def checked() -> bool:
        last = await marks.last_checked()
        return last is not None and last >= after

    await eventually(checked, what="a fatigue check in the next hour")


async def opened(bot: Bot, user: str) -> Blocks:
    """`user` opens the App Home: the blocks the bot published for this opening."""
    before = bot.emu.home_view(user)
    old = before.hash if before is not None else None
    await bot.emu.open_home(user)

    async def published() -> list[dict[str, Any]] | None:
        view = bot.emu.home_view(user)
        return list(view.definition["blocks"]) if view and view.hash != old else None

    blocks = await eventually(published, what=f"{user}'s App Home")
    return {b.get("block_id"): b for b in blocks}


def text(shown: Blocks, block_id: str) -> str:
    block = shown[block_id]
    return str(block["text"]["text"] if "text" in block else block["elements"][0]["text"])


def median_s(waits: list[int]) -> int:
    return sorted(waits)[math.ceil(len(waits) / 2) - 1] // SEC


async def test_an_operator_reads_each_suggestion_its_evidence_and_the_commands(
    bot: Bot, tmp_path: Path, redis_url: str
) -> None:
    m = month(bot)
    waits = await refunds(m, 30)
    for i in range(25):
        await m.call("wipe", EVIL, "ops-agent", {"n": i}, Event.APPROVE, "UBOB", 3 * SEC,
                     groups=GROUPS)  # fmt: skip
    await mined_next_hour(bot)
    shown = await opened(bot, OPERATOR)

    amounts = [a["amount"] for a in m.seen.args["refund"]]
    first = text(shown, "hitl_suggest_1")
    assert (
        f"`refund` by billing-agent (medium): run without review inside amount "
        f"{min(amounts)} to {max(amounts)}, currency one of EUR, USD; outside, medium as today"
    ) in first
    assert (
        f"Evidence: 30 approved, median {median_s(waits)} s, 0 rejected, 0 edited, "
        "0 timed out (of 30 requests)"
    ) in first
    assert "30 request(s) change tier (medium → low 30); 30 decided by a person" in first
    second = text(shown, "hitl_suggest_2")
    assert "`&lt;!channel&gt; wipe` by ops-agent (medium)" in second and "n 0 to 24" in second
    assert "Evidence: 25 approved, median 3 s" in second
    assert "<!channel>" not in str(list(shown.values()))
    how = text(shown, "hitl_suggest_how")
    assert "hitl-bot policy suggest --since 30d --out fragment.yml" in how
    assert "hitl-bot policy apply fragment.yml --by NAME" in how
    assert "from 55 requests: 2 suggestion(s), 2 shown" in text(shown, "hitl_suggest_foot")

    # Nobody else sees them.
    others = await opened(bot, "UALICE")
    assert "hitl_policy_head" in others  # her App Home, drawn whole
    assert not any(str(b).startswith(("hitl_suggest", "hitl_fatigue")) for b in others)
    assert "suggest" not in str(list(others.values()))

    # The commands shown, run as shown where HITL_POLICY names serve's file, write the
    # fragment and apply it: nothing changed until then.
    policy_file = tmp_path / "policy.yaml"
    assert "rules" not in yaml.safe_load(policy_file.read_text())["tools"].get(EVIL, {})
    commands = re.search(r"```(.*)```", how, re.S)
    assert commands is not None
    env = {"HITL_POLICY": str(policy_file)}
    for line in commands.group(1).strip("\u200b").splitlines():
        words = [w if w != "NAME" else "ops-carol" for w in shlex.split(line)]
        assert words[0] == "hitl-bot"
        code, _, err = await cli(*words[1:], redis_url=redis_url, env=env, cwd=tmp_path)
        assert code == 0, err
    tools = yaml.safe_load(policy_file.read_text())["tools"]
    assert tools["refund"]["review"] == "none" and tools[EVIL]["review"] == "none"


async def test_a_healthy_month_has_no_suggestions(bot: Bot) -> None:
    await refunds(month(bot), 25, wait_s=(120, 240))  # people read each, minutes long
    await mined_next_hour(bot)
    shown = await opened(bot, OPERATOR)
    assert "hitl_suggest_1" not in shown and "hitl_suggest_how" not in shown
    assert text(shown, "hitl_suggest_none").startswith(
        "No suggestions: in the 25 requests of the last 30 days, no pattern"
    )
    assert "hitl_fatigue_medium" in shown  # the figures still show beside it


async def test_mined_again_the_next_hour_never_on_opening_the_tab(bot: Bot) -> None:
    m = month(bot)
    await refunds(m, 25)
    await mined_next_hour(bot)
    first = await opened(bot, OPERATOR)
    assert "Evidence: 25 approved" in text(first, "hitl_suggest_1")

    m.gap_min = (0, 0)  # five more within the hour: each call moves the clock its wait
    await refunds(m, 5)
    await _a_check_after_now(bot)  # checks ran since, in the same hour
    again = await opened(bot, OPERATOR)
    assert "30 by people" in text(again, "hitl_fatigue_medium")  # the figures: read afresh
    assert text(again, "hitl_suggest_1") == text(first, "hitl_suggest_1")  # the summary: kept
    assert text(again, "hitl_suggest_foot") == text(first, "hitl_suggest_foot")

    bot.clock.advance(HOUR)
    await _a_check_after_now(bot)
    later = await opened(bot, OPERATOR)
    assert "Evidence: 30 approved" in text(later, "hitl_suggest_1")
    assert "from 30 requests" in text(later, "hitl_suggest_foot")


@pytest.mark.parametrize("serve_env", [{"hitl_fatigue_check_s": 0}])
async def test_without_the_hourly_check_the_panel_says_not_computed(bot: Bot) -> None:
    await refunds(month(bot), 25)
    bot.clock.advance(HOUR)
    shown = await opened(bot, OPERATOR)
    assert text(shown, "hitl_suggest_not_yet").startswith("Not computed yet (the hourly check")
    assert "`HITL_FATIGUE_CHECK_S=0`" in text(shown, "hitl_suggest_not_yet")

    # A damaged summary says so; the rest of the tab still shows.
    await bot.redis.set(keys.suggestions(), "not json")
    shown = await opened(bot, OPERATOR)
    assert "could not be read" in text(shown, "hitl_suggest_failed")
    assert "hitl_fatigue_medium" in shown and "hitl_policy_head" in shown
