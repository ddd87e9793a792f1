"""The operators' panel as blocks Slack accepts, with every name shown literally."""

from __future__ import annotations

from bot.core.fatigue import Decided, report
from bot.slack.blocks.fatigue_panel import fatigue_blocks
from tests.slack.test_render import assert_literal, mrkdwn_texts, validate_blocks

NOW = 1_800_000_000_000
EVIL = "<!channel> *boss* & <https://evil.example|click>"


def test_names_are_literal_and_the_blocks_valid() -> None:
    made = [
        Decided(str(i), "high", "approved", NOW - i, f"{EVIL}{i}", NOW - 60_000) for i in range(5)
    ] + [Decided("x", "high", "rejected", NOW - 9, "UANA", NOW - 9)]
    blocks = fatigue_blocks(report(made, since_ms=NOW - 86_400_000, now_ms=NOW))
    validate_blocks(blocks)
    for text in mrkdwn_texts(blocks):
        assert_literal(text)
    high = next(b for b in blocks if b.get("block_id") == "hitl_fatigue_high")["text"]["text"]
    assert "&lt;!channel&gt;" in high and "<!channel>" not in high
    assert "and 3 more" in high  # six approvers, three shown
    assert "too fast: 1 of 6" in high  # UANA's, on the card the moment it showed


def test_a_quiet_week_says_so() -> None:
    blocks = fatigue_blocks(report([], since_ms=NOW - 1, now_ms=NOW))
    assert [b.get("block_id") for b in blocks] == ["hitl_fatigue_head", "hitl_fatigue_none"]
