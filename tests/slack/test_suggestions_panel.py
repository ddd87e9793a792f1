"""The policy suggestions in the operators' panel as blocks Slack accepts, with every
name, argument and value an agent chose shown literally."""

from __future__ import annotations

import re
from typing import Any

from bot.core.models import RiskTier
from bot.core.suggestions.mining import Kind
from bot.core.suggestions.summary import SHOWN, BoundNote, Brief, Summary
from bot.slack.blocks.suggestions_panel import suggestion_blocks
from tests.slack.test_render import assert_literal, mrkdwn_texts, validate_blocks

NOW = 1_800_000_000_000
EVIL = "<!channel> *boss* & <https://evil.example|click>"


def _brief(i: int, kind: Kind = Kind.NO_REVIEW, **kw: Any) -> Brief:
    fields: dict[str, Any] = {
        "kind": kind, "tool": f"{EVIL}{i}", "requester": EVIL, "tier": RiskTier.MEDIUM,
        "new_tier": RiskTier.LOW, "requests": 40, "approved": 40, "rejected": 0, "edited": 0,
        "timed_out": 0, "median_ms": 3_000, "moved": 40,
        "tiers": ((RiskTier.MEDIUM, RiskTier.LOW, 40),), "to_auto": 40, "to_person": 0,
    }  # fmt: skip
    return Brief(**(fields | kw))


def _blocks(shown: tuple[Brief, ...], total: int) -> list[dict[str, Any]]:
    summary = Summary(
        computed_at=NOW, since_ms=NOW - 30 * 86_400_000, requests=900, total=total,
        shown=shown, commands=("hitl-bot policy suggest --since 30d --out fragment.yml",),
    )  # fmt: skip
    return suggestion_blocks(Summary.model_validate_json(summary.model_dump_json()), check_s=3600)


def test_agents_words_are_literal_and_the_blocks_valid() -> None:
    shown = (
        _brief(1, bounds=(
            BoundNote(argument=EVIL, values=tuple(f"{EVIL}{v}" for v in range(20))),
            BoundNote(argument="amount", low=2, high=48.5),
        ), loose=(EVIL,)),
        _brief(2, Kind.STRICTER, new_tier=RiskTier.HIGH, above=(EVIL, 1200)),
        _brief(3, Kind.STRICTER, new_tier=RiskTier.HIGH, median_ms=None),
    )  # fmt: skip
    blocks = _blocks(shown, total=7)
    validate_blocks(blocks)
    for text in mrkdwn_texts(blocks):
        assert_literal(text)
    first, second, third = (b["text"]["text"] for b in blocks[1:4])
    assert "&lt;!channel&gt;" in first and "<!channel>" not in first
    assert "amount 2 to 48.5" in first and re.search(r"and \d+ more", first)  # some cut
    assert "Not bounded (read before applying)" in first
    assert "review at high from &lt;!channel&gt;" in second and "1200 up" in second
    assert "review at high for every call" in third and "median -" in third
    assert "3 shown" in blocks[-1]["elements"][0]["text"] and SHOWN == 3


def test_before_the_first_mining_and_with_the_check_off() -> None:
    on = suggestion_blocks(None, check_s=3600)
    assert on[1]["text"]["text"].startswith("Not computed yet (the hourly check runs")
    assert "every 1 h" in on[1]["text"]["text"]
    off = suggestion_blocks(None, check_s=0)
    assert "`HITL_FATIGUE_CHECK_S=0`" in off[1]["text"]["text"]
    # A summary an earlier serve left is stale once the check is off: never shown as current.
    left = Summary(
        computed_at=NOW, since_ms=NOW - 30 * 86_400_000, requests=900, total=1,
        shown=(_brief(1),), commands=("hitl-bot policy suggest --since 30d",),
    )  # fmt: skip
    stale = suggestion_blocks(left, check_s=0)
    assert [b.get("block_id") for b in stale] == ["hitl_suggest_head", "hitl_suggest_not_yet"]
    assert "`HITL_FATIGUE_CHECK_S=0`" in stale[1]["text"]["text"]


def test_none_found_says_so() -> None:
    blocks = _blocks((), total=0)
    validate_blocks(blocks)
    assert [b.get("block_id") for b in blocks] == [
        "hitl_suggest_head", "hitl_suggest_none", "hitl_suggest_foot",
    ]  # fmt: skip
    assert blocks[1]["text"]["text"].startswith("No suggestions: in the 900 requests")
