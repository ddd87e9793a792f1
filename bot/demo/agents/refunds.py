"""A refunds desk: looking an order up is free, refunding it waits for a person.

Refunds above 1000 are raised to high risk by a policy rule, so they reach the
high tier's approvers and escalation chain. The orders and the ledger live in
this process's memory: a stand-in for a payments API.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from bot.agent.loader import Agent
from bot.agent.tools import ask_tool, propose_tool, tool

HIGH_ABOVE = 1000  # refunds above this amount need the high tier's approvers

ORDERS: dict[str, dict[str, Any]] = {
    "A1001": {"customer": "Ana", "total": 49.90, "currency": "EUR", "item": "headphones"},
    "A1002": {"customer": "Bo", "total": 1250.00, "currency": "USD", "item": "laptop"},
    "A1003": {"customer": "Chen", "total": 320.00, "currency": "EUR", "item": "desk"},
}
LEDGER: dict[str, dict[str, Any]] = {}  # idempotency key -> refund, as a payments API keeps it
# An order marked "per_run" (the demo's story order) counts only the refunds of the run
# asking, so every new run can tell its story again; a real order counts them all.
PER_RUN = "per_run"

SYSTEM_PROMPT = (
    "You handle refund requests. Look the order up first, refund at most what was paid, "
    "in the order's currency, and give a short reason. If the request is unclear, ask "
    "with ask_human. Refunds wait for a person's approval; if one is rejected, say why "
    "and stop."
)


def _refunded(order_id: str, run_id: str) -> float:
    per_run = bool(ORDERS[order_id].get(PER_RUN))
    return sum(
        float(r["amount"])
        for r in LEDGER.values()
        if r["order_id"] == order_id and (not per_run or r.get("run_id") == run_id)
    )


@tool(risk="low", review=False)
def lookup_order(order_id: str, run_id: str) -> dict[str, Any]:
    """Look an order up: customer, total paid, currency, item, and what was refunded."""
    order = ORDERS.get(order_id)
    if order is None:
        return {"error": f"no order {order_id}"}
    shown = {k: v for k, v in order.items() if k != PER_RUN}
    return {"order_id": order_id, **shown, "refunded": _refunded(order_id, run_id)}


def _void(idempotency_key: str) -> None:
    """A refund that failed half-way is voided, so a failure never leaves money moving."""
    LEDGER.pop(idempotency_key, None)


# `amount` is a number, not text, so the policy rule can compare it with the threshold.
@tool(risk="medium", rules=[{"if": f"amount > {HIGH_ABOVE}", "tier": "high"}], compensate=_void)
def issue_refund(
    order_id: str,
    amount: Annotated[float, Field(gt=0)],
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")],
    reason: Annotated[str, Field(min_length=3, max_length=500)],
    idempotency_key: str,
    run_id: str,
) -> str:
    """Refund part or all of an order. Money leaves the company: needs approval."""
    if idempotency_key in LEDGER:  # a retried call: the payments API answers the same
        return f"Refund {idempotency_key} already issued."
    order = ORDERS.get(order_id)
    if order is None:
        raise ValueError(f"no order {order_id}")
    if currency != order["currency"]:
        raise ValueError(f"order {order_id} was paid in {order['currency']}, not {currency}")
    if _refunded(order_id, run_id) + amount > order["total"] + 1e-9:
        raise ValueError(f"{amount} would refund more than the {order['total']} paid")
    LEDGER[idempotency_key] = {
        "order_id": order_id,
        "amount": round(amount, 2),
        "reason": reason,
        "run_id": run_id,
    }
    return f"Refunded {amount:.2f} {currency} on order {order_id}."


agent = Agent.of(
    "refunds",
    SYSTEM_PROMPT,
    [lookup_order, issue_refund, ask_tool(), propose_tool()],
    requester="refunds-agent",
)
