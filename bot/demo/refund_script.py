"""The refunds desk's model for the demo: rules that read the conversation like a model would.

It looks the order up, then refunds what the person asked for (at most what is
left of what was paid, in the order's currency). It reacts to what people did,
as the tool results tell it: a correction ("Cancelled. The person says: only
$500") changes the amount or the order and carries on from there, a rejection
or an unanswered approval ends the run, and an approved refund ends it with the
receipt. Asked to let a person choose ("in full or half, let a person choose"),
it proposes both refunds on one card (`propose`) and reports the one chosen.
Like `claw_script`, every reply is derived from the whole transcript, so a run
resumed by another worker gets the same answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.agent.llm import tool_calls_of
from bot.sandbox.model import Turn, call, say

ORDER_ID = re.compile(r"\b([A-Z]\d{4})\b", re.IGNORECASE)
MONEY = re.compile(
    r"[$€£]\s?(\d[\d,]*(?:\.\d{1,2})?)|(\d[\d,]*(?:\.\d{1,2})?)\s?(?:usd|eur|dollars?|euros?)\b",
    re.IGNORECASE,
)
CHOOSE = re.compile(r"\b(choose|pick|decide)\b", re.IGNORECASE)
IN_FULL = re.compile(r"\b(in full|full refund|everything|all of it)\b", re.IGNORECASE)
MENTION = re.compile(r"<@[A-Z0-9]+(\|[^>]*)?>")
ANSWERED = re.compile(r"^.*? answered: ", re.DOTALL)
# Result prefixes (bot/agent/messages.py) that end the run, and what the desk says then.
ENDINGS = (
    ("Rejected by", "The refund was rejected, so I did not issue it."),
    ("Nobody answered in time", "Nobody approved the refund in time, so I did not issue it."),
    ("Nobody answered the question", "Nobody told me which order, so I refunded nothing."),
    ("Cancelled: the run was stopped", "Stopped."),
    ("Cancelled. The person stopped the run", "Stopped."),
    ("The question was withdrawn", "Stopped."),
    ("The call failed", "The refund failed and was undone; nothing was refunded."),
    ("Error:", "I could not make a valid refund out of this request, so I stopped."),
)


@dataclass
class _Reading:
    """What the conversation says so far."""

    order_id: str | None = None
    amount: float | None = None  # None: whatever is left to refund
    reason: str = ""
    corrected: bool = False  # a person changed the amount after the first request
    choose: bool = False  # the first request asks a person to choose: full or half
    order: dict[str, Any] | None = None  # the last lookup of order_id
    asked: bool = False
    receipt: str | None = None
    ending: str | None = None


def _money(text: str) -> float | None:
    m = MONEY.search(text)
    if m is None:
        return None
    return float((m.group(1) or m.group(2)).replace(",", ""))


def _hear(r: _Reading, text: str, *, first: bool = False) -> None:
    """A person's words: they may name another order, another amount, or 'in full'."""
    found = ORDER_ID.search(text)
    if found and found.group(1).upper() != r.order_id:
        r.order_id, r.order = found.group(1).upper(), None
    before = r.amount
    if IN_FULL.search(text):
        r.amount = None
    elif (amount := _money(text)) is not None:
        r.amount = amount
    r.corrected = r.corrected or (not first and r.amount != before)
    r.receipt = r.ending = None  # they spoke after it: the earlier outcome is not the last word


def _read(messages: Sequence[Mapping[str, Any]]) -> _Reading:
    r = _Reading()
    names: dict[str, str] = {}
    first = True
    for m in messages:
        role, content = m.get("role"), str(m.get("content") or "")
        if role == "user":
            text = MENTION.sub("", content).strip()
            _hear(r, text, first=first)
            if first:
                r.reason, first = text, False
                r.choose = bool(CHOOSE.search(text))
        elif role == "assistant":
            names |= {c.id: c.name for c in tool_calls_of(m)}
        elif role == "tool":
            _apply(r, names.get(str(m.get("tool_call_id")), ""), content)
    return r


def _apply(r: _Reading, name: str, result: str) -> None:
    if result.startswith("Cancelled. The person says:"):
        _hear(r, result.split(":", 1)[1])
        return
    for prefix, ending in ENDINGS:
        if result.startswith(prefix):
            r.ending = ending
            return
    if name == "lookup_order":
        try:
            r.order = json.loads(result)
        except ValueError:
            r.order = {"error": result}
    elif name == "ask_human":
        r.asked = True
        _hear(r, ANSWERED.sub("", result, count=1))
    elif name in ("issue_refund", "propose"):
        r.receipt = result.split("Result: ", 1)[-1]


def _whole(amount: float) -> float | int:
    return int(amount) if amount == int(amount) else round(amount, 2)


def refund_responder(messages: Sequence[Mapping[str, Any]]) -> Turn:
    r = _read(messages)
    if r.ending:
        return say(r.ending)
    if r.receipt:
        return say(f"Done. {r.receipt}")
    if r.order_id is None:
        if r.asked:
            return say("I still don't know which order to refund, so I refunded nothing.")
        return call("ask_human", question="Which order should I refund? (for example A1004)")
    if r.order is None or r.order.get("order_id") != r.order_id:
        return call("lookup_order", order_id=r.order_id)
    if "error" in r.order:
        return say(f"I could not find order {r.order_id}, so I refunded nothing.")
    left = float(r.order["total"]) - float(r.order.get("refunded") or 0)
    if left <= 0:
        return say(f"Order {r.order_id} is already refunded in full.")
    amount = left if r.amount is None else min(r.amount, left)
    reason = r.reason[:200] if len(r.reason) >= 3 else "requested by the customer"
    if r.choose and not r.corrected:
        return _propose(r.order_id, left, r.order["currency"])
    if r.corrected:  # the first request's amount is no longer the one asked for
        how = "in full" if amount == left else "partly"
        cur = r.order["currency"]
        reason = f"Refund {how}: {_whole(amount):,} {cur}, as corrected by a person"
    return call(
        "issue_refund",
        order_id=r.order_id,
        amount=_whole(amount),
        currency=r.order["currency"],
        reason=reason,
    )


def _propose(order_id: str, left: float, currency: str) -> Turn:
    """Both refunds a person may pick from: all that is left, or half of it."""
    candidates = [
        {
            "order_id": order_id,
            "amount": _whole(amount),
            "currency": currency,
            "reason": f"Refund {how}: {_whole(amount):,} {currency}, as a person chose",
        }
        for how, amount in (("in full", left), ("half", round(left / 2, 2)))
    ]
    return call("propose", tool="issue_refund", candidates=candidates)
