"""The digest card as Slack would take it: within its limits however many calls wait,
every argument shown literally, totals only where they add up, no batch buttons where
a batch decision is not allowed."""

from __future__ import annotations

import re
from typing import Any

from bot.core.models import ActionRequest
from bot.core.policy import parse_policy
from bot.core.proposal import propose
from bot.slack.batch import card
from tests.conftest import QUORUM_POLICY
from tests.slack.test_render import (
    NASTY,
    NOW,
    assert_literal,
    buttons,
    mrkdwn_texts,
    unescape,
    validate_blocks,
)

POLICY = parse_policy(QUORUM_POLICY)
GROUP = "0123456789abcdef01234567"
ROW_LINK = re.compile(r"<https?://[^|<>\s]+\|#\d+ r\d{5}>")


def reqs(args: list[dict[str, Any]], tool: str = "refund") -> list[ActionRequest]:
    out = []
    for i, a in enumerate(args):
        req, _ = propose(
            POLICY, request_id=f"r{i:05d}", tool=tool, args=a, requester="billing-agent", now=NOW
        )
        out.append(req)
    return out


def links(rs: list[ActionRequest]) -> dict[str, str]:
    return {r.id: f"https://acme.slack.com/archives/C1/p{i}" for i, r in enumerate(rs)}


def draw(rs: list[ActionRequest]) -> tuple[Any, list[card.Shown]]:
    return card.digest_message(rs, links(rs), GROUP)


def test_the_head_sums_amounts_of_one_currency_and_each_row_links_its_card() -> None:
    rs = reqs([{"amount": a, "currency": "USD", "to": "c"} for a in (120, 480.5, 639.5)])
    msg, shown = draw(rs)
    validate_blocks(msg.blocks)
    text = "\n".join(mrkdwn_texts(msg.blocks))
    assert "*3 `refund` calls from `billing-agent`*" in text and "*1,240.0 USD*" in text
    for r, s in zip(rs, shown, strict=True):
        assert f"|#{rs.index(r) + 1} {r.id}>" in text and s.payload_hash == r.payload_hash
    got = buttons(msg.blocks)
    assert got[card.ACTION_APPROVE_ALL]["text"]["text"] == "Approve all 3"
    assert got[card.ACTION_REJECT_ALL]["text"]["text"] == "Reject all 3"
    assert card.DigestValue.decode(got[card.ACTION_APPROVE_ALL]["value"]) == (
        GROUP,
        card.view_hash(shown),
    )


def test_no_total_unless_every_call_has_an_amount_in_the_same_currency() -> None:
    mixed = reqs([{"amount": 1, "currency": c} for c in ("USD", "USD", "EUR")])
    missing = reqs([{"amount": 1, "currency": "USD"}] * 2 + [{"currency": "USD"}])
    flags = reqs([{"amount": True, "currency": "USD"}] * 3)
    no_currency = reqs([{"amount": 5}] * 3)
    for rs in (mixed, missing, flags, no_currency):
        head = mrkdwn_texts(draw(rs)[0].blocks)[0]
        assert "in all" not in head and head.startswith("*3 `refund` calls"), head


def test_the_view_hash_changes_with_any_version_or_payload_shown() -> None:
    rs = reqs([{"amount": a, "currency": "USD"} for a in (1, 2, 3)])
    _, shown = draw(rs)
    base = card.view_hash(shown)
    moved = [shown[0], card.Shown(shown[1].id, shown[1].version + 1, shown[1].payload_hash, "")]
    assert card.view_hash([*moved, shown[2]]) != base
    other = card.Shown(shown[2].id, shown[2].version, "0" * 64, shown[2].link)
    assert card.view_hash([*shown[:2], other]) != base
    assert card.view_hash(shown[:2]) != base


def test_untrusted_arguments_show_literally_and_long_ones_are_cut_visibly() -> None:
    rs = reqs([{"to": n, "memo": "x" * 500, "amount": 1, "currency": "<!here>"} for n in NASTY])
    msg, _ = draw(rs)
    validate_blocks(msg.blocks)
    for text in mrkdwn_texts(msg.blocks):
        assert_literal(ROW_LINK.sub("", text))
    shown = unescape("\n".join(mrkdwn_texts(msg.blocks)))
    assert "<!channel>" in shown and "x" * 500 not in shown and "x…`" in shown
    assert_literal(msg.text)


def test_hundreds_waiting_stay_under_fifty_blocks_and_the_batch_is_what_is_shown() -> None:
    rs = reqs([{"amount": i, "currency": "USD", "memo": "y" * 300} for i in range(500)])
    msg, shown = draw(rs)
    validate_blocks(msg.blocks)
    assert len(shown) == card.MAX_ROWS
    got = buttons(msg.blocks)
    assert got[card.ACTION_APPROVE_ALL]["text"]["text"] == f"Approve all {card.MAX_ROWS}"
    text = "\n".join(mrkdwn_texts(msg.blocks))
    assert f"and {500 - card.MAX_ROWS} more waiting, not in this batch" in text


def test_no_batch_buttons_for_critical_a_quorum_or_an_edited_call() -> None:
    critical = reqs([{"service": s} for s in "abc"], tool="deploy")  # critical: quorum 2
    medium = reqs([{"amount": a, "currency": "USD"} for a in (1, 2, 3)])
    edited = [*medium[:2], medium[2].model_copy(update={"original_hash": "f" * 64})]
    quorum = [*medium[:2], medium[2].model_copy(update={"quorum": 2})]
    for rs, why in (
        (critical, "critical call"),
        (edited, "was edited"),
        (quorum, "needs 2 approvers"),
    ):
        msg, _ = draw(rs)
        assert not buttons(msg.blocks), why
        assert why in "\n".join(mrkdwn_texts(msg.blocks))
        validate_blocks(msg.blocks)


def test_a_closed_digest_says_so_without_buttons() -> None:
    msg = card.closed_message("<!channel>", "billing-agent")
    validate_blocks(msg.blocks)
    assert not buttons(msg.blocks) and "Fewer than three" in msg.blocks[0]["elements"][0]["text"]
    assert_literal(msg.text)
