"""The approver sees every argument, as it is: all names in order, hidden characters
spelled out with a warning, and numbers without digits the payload does not hold."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.core.invisible import hidden_in, visible
from bot.core.models import ActionRequest, Level, RiskTier
from bot.core.states import Event, State
from bot.slack import messages as m
from bot.slack.blocks import escape as esc
from bot.slack.blocks import render, views
from bot.slack.blocks.call import number
from tests.slack.test_render import (
    NOW,
    buttons,
    decide,
    make,
    mrkdwn_texts,
    validate,
    validate_blocks,
)

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "\u202e12345" displays as 54321


def shown(blocks: list[dict[str, Any]]) -> str:
    """Everything a reader sees, mrkdwn and plain_text alike."""
    text = json.dumps(blocks, ensure_ascii=False)
    return "\n".join(mrkdwn_texts(blocks)) + "\n" + text


def arg_positions(text: str, names: list[str]) -> list[int]:
    return [text.index(f'"{n}": ') for n in names]


def test_a_20kb_argument_is_cut_alone_and_every_name_shows_in_order() -> None:
    args = {"order_id": "A-1001", "blob": "b" * 20_000, "note": "ship it", "amount": 3}
    msg = render.approval_message(make(args=args), now_ms=NOW)
    validate(msg)
    text = "\n".join(mrkdwn_texts(msg.blocks))
    # One sorted dump cut at 3,000 characters would lose order_id and note.
    assert '"order_id": "A-1001"' in text and '"note": "ship it"' in text and '"amount": 3' in text
    pos = arg_positions(text, list(args))
    assert pos == sorted(pos), "arguments show in the caller's order"
    assert "… ✂ cut: 20,002 characters in all" in text  # the marker sits on the cut value
    assert "✂ Cut to fit in Slack: `blob` (20,002 characters)" in text
    assert m.BTN_VIEW in text  # and says where the rest is


@pytest.mark.parametrize("size", [1_000, 2_900, 9_000])
def test_sixty_arguments_all_named_and_the_message_stays_valid(size: int) -> None:
    names = [f"arg_{i:02d}" for i in range(60)]
    args = {n: "v" * size for n in reversed(names)}  # reversed: order is the caller's
    req = ActionRequest(
        id="r1",
        tool="bulk",
        args=args,
        payload_hash="a" * 64,
        requester="U0REQ",
        risk=RiskTier.HIGH,
        created_at=NOW,
        state=State.PENDING_REVIEW,
        expires_at=NOW + 1,
        levels=(Level(timeout_ms=1000, users=("U0ONE",)),),
    )  # fmt: skip  (built directly: 60 x 9,000 characters is over the gate's 64 KB)
    for msg in (
        render.approval_message(req, now_ms=NOW),
        render.escalation_message(req, now_ms=NOW),
    ):
        validate(msg)  # slack_sdk lengths, 50 blocks, 3,000-character sections
        text = "\n".join(mrkdwn_texts(msg.blocks))
        pos = arg_positions(text, list(args))
        assert pos == sorted(pos)
        assert len(buttons(msg.blocks)) == 3  # approve, reject, view: still decidable


def test_thousands_of_arguments_still_fit_and_say_how_many_are_not_named() -> None:
    args = {f"{'&' * 60}{i}": "&" * 60 for i in range(5_000)}  # & escapes to 5 characters
    req = ActionRequest(
        id="r1", tool="bulk", args=args, payload_hash="a" * 64, requester="U0REQ",
        risk=RiskTier.LOW, created_at=NOW, state=State.PENDING_REVIEW, expires_at=NOW + 1,
        levels=(Level(timeout_ms=1000, users=("U0ONE",)),),
    )  # fmt: skip
    msg = render.approval_message(req, now_ms=NOW)
    validate(msg)
    text = "\n".join(mrkdwn_texts(msg.blocks))
    assert "*5,000 arguments*" in text and "more" in text


def test_hidden_characters_are_spelled_out_with_a_warning_everywhere() -> None:
    args = {
        "amount": f"{RLO}12345",
        f"na\u200bme{RLO}": "zero\u200bwidth\ufeff \u2066iso\u2069 \x07bell \x9bcsi",
        "mention": "<!channel>",
        "text": "two\nlines\tand a tab",
    }
    req = make(f"re{RLO}fund", args, requester=f"agent{RLO}x")
    assert hidden_in(req.args)
    msgs = [
        render.approval_message(req, now_ms=NOW),
        render.escalation_message(decide(req, Event.TIMEOUT, "system", at=NOW + 1), now_ms=NOW),
        render.approval_message(
            decide(req, Event.REJECT, reason_code="other", text=f"no{RLO}pe"), now_ms=NOW
        ),
    ]
    for msg in msgs:
        validate(msg)
        everything = shown(msg.blocks) + msg.text
        for ch in (RLO, "\u200b", "\ufeff", "\u2066", "\u2069", "\x07", "\x9b"):
            assert ch not in everything, repr(ch)
        assert "\\u202e12345" in everything  # never 54321
        assert "re\\u202efund" in everything and "na\\u200bme\\u202e" in everything
        assert "\\u2066iso\\u2069" in everything and "\\u0007bell" in everything
        assert "&lt;!channel&gt;" in everything  # mrkdwn escaping stays
        assert "two\\nlines\\tand a tab" in everything  # JSON's own escapes, unchanged
        warning = next(b for b in msg.blocks if b.get("block_id") == "hitl_hidden")
        assert warning["elements"][0]["text"] == m.HIDDEN_CHARS_WARNING
    assert "no\\u202epe" in shown(msgs[2].blocks)
    modal = views.payload_modal(req)
    assert any(b.get("block_id") == "hitl_hidden" for b in modal["blocks"])
    assert RLO not in json.dumps(modal, ensure_ascii=False)


def test_no_warning_when_nothing_is_hidden() -> None:
    msg = render.approval_message(make(args={"to": "Zoë 北京 🚀", "n": 1}), now_ms=NOW)
    assert not any(b.get("block_id") == "hitl_hidden" for b in msg.blocks)


def test_visible_uses_json_escapes_that_parse_back() -> None:
    raw = f"a{RLO}b\u200b\U000e0041c\u2028d\ud800e\n\t"
    assert visible(raw) == "a\\u202eb\\u200b\\udb40\\udc41c\\u2028d\\ud800e\n\t"
    assert json.loads('"' + visible(f"a{RLO}b\U000e0041") + '"') == f"a{RLO}b\U000e0041"
    assert visible("plain Zoë 北京 🚀") == "plain Zoë 北京 🚀"
    # a cut never leaves half an escape behind
    assert esc.truncate(esc.mrkdwn(f"abc{RLO}"), 7) == "abc…"


@pytest.mark.parametrize(
    ("amount", "shown_as"),
    [
        (4200, "4,200 USD"),
        (4200.0, "4,200 USD"),  # a float schema turns 4200 into 4200.0: no ".0" invented
        (1234.5, "1,234.5 USD"),
        (-0.25, "-0.25 USD"),
        (0.1, "0.1 USD"),
        (10_000_000, "10,000,000 USD"),
    ],
)
def test_amounts_show_the_digits_the_payload_holds(amount: float, shown_as: str) -> None:
    msg = render.approval_message(
        make(args={"amount": amount, "currency": "USD", "to": "x"}), now_ms=NOW
    )
    assert f"*amount*\n`{shown_as}`" in "\n".join(mrkdwn_texts(msg.blocks))


def test_number_keeps_exponents_and_specials_as_they_are() -> None:
    assert number(1e-07) == "1e-07" and number(1e300) == "1e+300"
    assert number(float("inf")) == "inf" and number(-3) == "-3"


def test_call_blocks_respect_a_smaller_budget_in_modals() -> None:
    args = {f"k{i}": "x" * 2_000 for i in range(30)}
    blocks = render.call_blocks(make(args=args), max_blocks=8)
    assert len(blocks) <= 8
    validate_blocks(blocks)
    text = "\n".join(mrkdwn_texts(blocks))
    assert all(f'"k{i}": ' in text for i in range(30))
