"""The refusals the notifier gives up are exactly those docs/troubleshooting.md lists."""

from __future__ import annotations

import re
from pathlib import Path

from bot.slack.delivery.refusals import GIVEN_UP

PAGE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"


def test_every_refusal_given_up_is_listed_in_troubleshooting() -> None:
    text = PAGE.read_text()
    start = text.index("Only the\n  refusals no retry can fix are given up")
    listed = text[start : text.index("\n- ", start)]
    codes = set(re.findall(r"`([a-z_]+)`", listed))
    assert codes == GIVEN_UP, (codes - GIVEN_UP, GIVEN_UP - codes)
    for retried in ("not_in_channel", "channel_not_found", "is_archived", "missing_scope"):
        assert retried not in GIVEN_UP and f"`{retried}`" in text
