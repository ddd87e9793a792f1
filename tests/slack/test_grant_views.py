"""The "Allow similar calls" dialog and the grant's card parts, as pure functions: what
Slack accepts (slack_sdk's own checks), and what a submission may and may not ask."""

from __future__ import annotations

import copy
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from bot.core.grants import Grant, bounds_of
from bot.core.models import ActionRequest
from bot.core.policy import Policy, parse_policy
from bot.core.proposal import propose
from bot.slack.grants.card import ACTION_GRANT, ACTION_REVOKE, card_extra, grant_button
from bot.slack.grants.views import (
    MAX_BLOCK,
    MIN_BLOCK,
    SCOPE_BLOCK,
    SPAN_BLOCK,
    USES_BLOCK,
    Asked,
    grant_modal,
    read_submission,
)
from bot.store.grants import Held
from tests.conftest import QUORUM_POLICY

HOUR = 3_600_000


def _policy(**standing: Any) -> Policy:
    data: dict[str, Any] = copy.deepcopy(QUORUM_POLICY)
    data["tiers"]["medium"]["standing"] = {"max": "1h", "scope": "requester", **standing}
    return parse_policy(data)


def _req(p: Policy, args: dict[str, Any], run_id: str | None = "run1") -> ActionRequest:
    req, _ = propose(
        p, request_id="r1", tool="refund", args=args, requester="agent", now=0, run_id=run_id
    )
    return req


def _values(uses: str = "3", span: str = str(HOUR), scope: str = "run", **maxes: str) -> Any:
    values: dict[str, Any] = {
        SCOPE_BLOCK: {"scope": {"selected_option": {"value": scope}}},
        SPAN_BLOCK: {"span": {"selected_option": {"value": span}}},
        USES_BLOCK: {"uses": {"value": uses}},
    }
    for block, text in maxes.items():
        values[block] = {"min" if block.startswith(MIN_BLOCK) else "max": {"value": text}}
    return values


def test_the_dialog_is_a_valid_view_showing_every_bound() -> None:
    p = _policy()
    req = _req(p, {"amount": 50, "to": "<!channel>", "fee": 1.5})
    view = grant_modal(req, p)
    View(**view).to_dict()  # title, submit, blocks and metadata within Slack's limits
    for b in view["blocks"]:
        Block.parse(b)
    text = str(view["blocks"])
    assert "&lt;!channel&gt;" in text and "<!channel>" not in text
    boxes = [b for b in view["blocks"] if str(b.get("block_id", "")).startswith(MAX_BLOCK)]
    assert [b["element"]["initial_value"] for b in boxes] == ["50", "1.5"]  # amount, fee
    floors = [b for b in view["blocks"] if str(b.get("block_id", "")).startswith(MIN_BLOCK)]
    assert [b["element"]["initial_value"] for b in floors] == ["0", "0"]  # never across zero


def test_a_submission_sets_a_range_around_the_approved_value_never_without_it() -> None:
    p = _policy()
    req = _req(p, {"amount": 50, "to": "cust-1"})
    ok = read_submission(req, p, _values(**{f"{MAX_BLOCK}0": "80"}))
    assert isinstance(ok, Asked) and ok.uses == 3
    assert (ok.bounds["amount"].lo, ok.bounds["amount"].hi) == (0, 80)
    low = read_submission(req, p, _values(**{f"{MAX_BLOCK}0": "49"}))
    assert isinstance(low, dict) and f"{MAX_BLOCK}0" in low
    above = read_submission(req, p, _values(**{f"{MIN_BLOCK}0": "51"}))
    assert isinstance(above, dict) and f"{MAX_BLOCK}0" in above
    across = read_submission(req, p, _values(**{f"{MIN_BLOCK}0": "-20"}))
    assert isinstance(across, Asked) and across.bounds["amount"].lo == -20  # typed: explicit
    huge = read_submission(req, p, _values(**{f"{MAX_BLOCK}0": "9" * 30}))
    assert isinstance(huge, dict)
    bads = (_values(span=str(2 * HOUR)), _values(uses="0"), _values(uses="101"))
    typed = (_values(uses="\u00b2"), _values(uses="\u2460"), _values(uses="\u0663"))  # ² ① ٣
    for bad in (*bads, *typed):
        assert isinstance(read_submission(req, p, bad), dict)
    no_run = _req(p, {"amount": 50, "to": "cust-1"}, run_id=None)
    only_run = _policy(scope="run")
    for refused in (
        read_submission(no_run, p, _values(scope="run")),
        read_submission(req, only_run, _values(scope="requester")),
    ):
        assert isinstance(refused, dict) and SCOPE_BLOCK in refused


def test_the_card_offers_a_grant_only_where_the_tier_allows_and_revoke_while_live() -> None:
    p = _policy()
    req = _req(p, {"amount": 50, "to": "cust-1"})
    assert ACTION_GRANT in str(grant_button(req, p))
    assert grant_button(_req(p, {"amount": 5000, "to": "cust-1"}), p) == []  # high
    assert grant_button(req, parse_policy(QUORUM_POLICY)) == []  # no standing
    g = Grant(
        id="G1",
        tool="refund",
        risk=req.risk,
        scope="run",
        requester="agent",
        owner="agent",
        run_id="run1",
        bounds=bounds_of(req.args),
        uses=3,
        granted_by="UKID",
        created_at=0,
        expires_at=HOUR,
        source="r1",
    )
    approved = req.model_copy(update={"state": "approved"})
    live = card_extra(approved, p, Held(g, 2, None, None), now=10)
    assert ACTION_REVOKE in str(live) and "2 of 3 left" in str(live)
    for ended, why in (
        (Held(g, 2, "UOPS", 5), "revoked by <@UOPS>"),
        (Held(g, 0, None, None), "all 3 uses taken"),
    ):
        blocks = card_extra(approved, p, ended, now=10)
        assert why in str(blocks) and ACTION_REVOKE not in str(blocks)
    assert "expired" in str(card_extra(approved, p, Held(g, 2, None, None), now=HOUR))


def test_a_proposal_card_offers_no_grant() -> None:
    p = _policy(max="1h", scope="run")
    req = _req(p, {"amount": 5, "to": "cust-1"})
    assert ACTION_GRANT in str(grant_button(req, p))
    proposal = req.model_copy(update={"candidates": ({"amount": 1}, {"amount": 2})})
    assert grant_button(proposal, p) == []
