"""Which replies came after their card: Slack timestamps compared as exact numbers."""

from __future__ import annotations

from bot.slack.listeners.replies import before_card, ts_order


def test_timestamps_compare_as_numbers_not_text_nor_floats() -> None:
    assert ts_order("1700000000.000200") > ts_order("1700000000.000199")
    assert ts_order("999999999.9") < ts_order("1000000000.000001")
    assert ts_order("1700000000.000001") > ts_order("1700000000.000000")


def test_a_reply_decides_only_a_card_posted_before_it() -> None:
    card = "1700000000.000500"
    assert not before_card("1700000000.000501", card)
    assert before_card("1700000000.000500", card)  # the card itself, or a clash: never
    assert before_card("1699999940.000500", card)  # a retry delivered a minute late
    assert before_card("1700000000.000600", None)  # no card posted yet
    assert before_card("not-a-ts", card)
