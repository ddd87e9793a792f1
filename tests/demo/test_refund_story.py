"""The refunds desk's $4,200 story: a correction shows in the refund's reason,
and every new run can tell the story again in the same demo session."""

from __future__ import annotations

import pytest

from bot.demo.agents import refunds
from bot.demo.app import DEMO_ORDERS
from bot.sandbox.refund_script import refund_responder
from tests.demo.test_demo_inprocess import LOOKUP, PROMPT, SYSTEM, args_of, turn


def test_the_reason_restates_the_corrected_amount() -> None:
    first = args_of(refund_responder([SYSTEM, PROMPT, *LOOKUP]))
    assert first["amount"] == 4200 and "4,200" in first["reason"]
    steer = turn("issue_refund", "{}", "Cancelled. The person says: No, wait: make it $1,100", 2)
    again = args_of(refund_responder([SYSTEM, PROMPT, *LOOKUP, *steer]))
    assert again["amount"] == 1100
    assert "1,100 USD" in again["reason"] and "4,200" not in again["reason"]
    assert "in full" not in again["reason"]


def test_each_run_may_refund_the_demo_order_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refunds, "ORDERS", {**refunds.ORDERS, **DEMO_ORDERS})
    monkeypatch.setattr(refunds, "LEDGER", {})
    args = {"order_id": "A1004", "amount": 4200.0, "currency": "USD", "reason": "TV"}
    done = refunds.issue_refund.fn(**args, idempotency_key="r1", run_id="run-1")
    assert done.startswith("Refunded 4200.00 USD")
    # The same run sees it refunded; a new run finds the story order untouched.
    assert refunds.lookup_order.fn("A1004", run_id="run-1")["refunded"] == 4200.0
    fresh = refunds.lookup_order.fn("A1004", run_id="run-2")
    assert fresh["refunded"] == 0 and "per_run" not in fresh
    assert refunds.issue_refund.fn(**args, idempotency_key="r2", run_id="run-2")
    # A real order counts every run's refunds: it cannot be refunded twice.
    real = {"order_id": "A1002", "amount": 1250.0, "currency": "USD", "reason": "x"}
    refunds.issue_refund.fn(**real, idempotency_key="r3", run_id="run-1")
    assert refunds.lookup_order.fn("A1002", run_id="run-2")["refunded"] == 1250.0
