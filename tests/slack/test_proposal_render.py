"""A proposal's card and its View modal, rendered: every candidate, escaped, and what a
person's choice binds."""

from __future__ import annotations

import json

from bot.core.candidates import as_proposal, proposal_hash
from bot.core.models import ActionRequest
from bot.core.policy import parse_policy
from bot.core.proposal import propose
from bot.slack.blocks import render, views
from bot.slack.blocks.proposals import ACTION_CHOOSE, parse_choice
from tests.conftest import QUORUM_POLICY

CANDS = [{"to": "<!channel>", "amount": 5}, {"to": "ana", "amount": 7}]


def _proposal() -> ActionRequest:
    req, needs = propose(
        parse_policy(QUORUM_POLICY),
        request_id="r1",
        tool="refund",
        args=CANDS[0],
        requester="agent",
        now=1_000,
    )
    return as_proposal(req, CANDS, needs_review=needs)


def test_the_card_shows_each_candidate_escaped_with_its_choose_button() -> None:
    req = _proposal()
    msg = render.approval_message(req, now_ms=1_000)
    text = json.dumps(msg.blocks)
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text and '\\"ana\\"' in text
    chooses = [b["accessory"] for b in msg.blocks if "accessory" in b]
    assert [c["action_id"] for c in chooses] == [f"{ACTION_CHOOSE}_0", f"{ACTION_CHOOSE}_1"]
    for i, c in enumerate(chooses):
        assert parse_choice(c["value"]) == (i, "r1", proposal_hash("refund", CANDS))
    assert len({b.get("block_id") for b in msg.blocks}) == len(msg.blocks)  # ids unique


def test_the_view_modal_of_an_unchosen_proposal_lists_its_candidates() -> None:
    view = views.payload_modal(_proposal())
    text = json.dumps(view)
    assert "ana" in text and "&lt;!channel&gt;" in text
