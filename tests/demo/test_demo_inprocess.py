"""The demo's policy and the refunds desk's rules, and the refunds demo run in this process."""

from __future__ import annotations

import io
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.models import RiskTier
from bot.demo.agents import refunds
from bot.demo.app import DemoOptions, demo_responder
from bot.demo.policy import demo_policy
from bot.demo.refund_script import refund_responder
from bot.sandbox.model import Turn
from tests.demo.running import running_demo
from tests.support.poll import eventually

SYSTEM = {"role": "system", "content": "You handle refund requests."}
PROMPT = {"role": "user", "content": "<@UBOT> Refund order A1004 in full ($4,200), TV broken"}


def turn(name: str, args: str, result: str, n: int) -> list[dict[str, Any]]:
    """An assistant tool call and its result, as the loop records them."""
    call = {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": args}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": result},
    ]


def args_of(reply: Turn) -> dict[str, Any]:
    """The arguments of the reply's one tool call."""
    arguments = reply.calls[0].arguments
    assert not isinstance(arguments, str)
    return dict(arguments)


LOOKUP = turn(
    "lookup_order",
    '{"order_id": "A1004"}',
    '{"order_id": "A1004", "total": 4200.0, "currency": "USD", "refunded": 0}',
    1,
)


def test_the_demo_policy_gates_what_the_walkthrough_says() -> None:
    policy = demo_policy()
    assert not policy.classify("move_claw", {"direction": "left", "cm": 10}).review
    assert policy.classify("drop_claw", {"target": "bear"}).tier == RiskTier.MEDIUM
    assert policy.classify("issue_refund", {"amount": 4200}).tier == RiskTier.HIGH
    assert policy.classify("issue_refund", {"amount": 40}).tier == RiskTier.MEDIUM
    parent, oncall = policy.levels(RiskTier.MEDIUM, 0)
    assert (parent.users, oncall.groups, parent.timeout_ms) == (("UPARENT",), ("SONCALL",), 45_000)
    assert policy.tiers[RiskTier.HIGH].escalation[0].channels == ("#hitl-oncall",)


def test_refunds_look_up_then_refund_what_was_asked_capped_at_what_was_paid() -> None:
    first = refund_responder([SYSTEM, PROMPT])
    assert (first.calls[0].name, first.calls[0].arguments) == (
        "lookup_order",
        {"order_id": "A1004"},
    )
    refund_turn = refund_responder([SYSTEM, PROMPT, *LOOKUP])
    assert refund_turn.calls[0].name == "issue_refund"
    assert {k: v for k, v in args_of(refund_turn).items() if k != "reason"} == {
        "order_id": "A1004",
        "amount": 4200,
        "currency": "USD",
    }
    greedy = {"role": "user", "content": "Refund $9,000 on A1004"}
    assert args_of(refund_responder([SYSTEM, greedy, *LOOKUP]))["amount"] == 4200


def test_refunds_react_to_people() -> None:
    def after(result: str) -> Any:
        return refund_responder([SYSTEM, PROMPT, *LOOKUP, *turn("issue_refund", "{}", result, 2)])

    assert after("Approved by UALICE. Result: Refunded 4200.00 USD on order A1004.").content == (
        "Done. Refunded 4200.00 USD on order A1004."
    )
    assert "rejected" in (after("Rejected by UALICE (reason: too_risky). ...").content or "")
    assert "in time" in (after("Nobody answered in time, the default ...").content or "")
    steered = after("Cancelled. The person says: No, wait: make it $1,100")
    assert args_of(steered)["amount"] == 1100
    vague = refund_responder([SYSTEM, {"role": "user", "content": "refund my thing"}])
    assert vague.calls[0].name == "ask_human"


def test_the_demo_model_answers_for_either_agent() -> None:
    from bot.demo.agents import claw

    claw_turn = demo_responder(
        [{"role": "system", "content": claw.SYSTEM_PROMPT}, {"role": "user", "content": "bear"}]
    )
    assert claw_turn.calls[0].name == "move_claw"
    refunds_system = {"role": "system", "content": refunds.SYSTEM_PROMPT}
    assert demo_responder([refunds_system, PROMPT]).calls[0].name == "lookup_order"


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hd", dir="/tmp"))  # short: a Unix socket lives there
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(params=["http", "socket"])
async def refunds_demo(
    data_dir: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[httpx.AsyncClient, io.StringIO]]:
    socket_mode = request.param == "socket"  # `hitl-bot demo --socket-mode`
    options = DemoOptions(agent="refunds", port=0, data_dir=data_dir, socket_mode=socket_mode)
    async with running_demo(data_dir, options) as (page, printed):
        yield page, printed


async def test_a_4200_refund_waits_for_finance(
    refunds_demo: tuple[httpx.AsyncClient, io.StringIO],
) -> None:
    page, printed = refunds_demo
    text = "<@UBOT> Refund order A1004 in full ($4,200), the TV arrived broken"
    posted = (
        await page.post("/_emu/post", json={"user": "UCAROL", "channel": "#general", "text": text})
    ).json()

    async def reply(needle: str) -> dict[str, Any] | None:
        state = (await page.get("/_emu/state")).json()
        general = next(c for c in state["channels"] if c["name"] == "general")
        home = next(m for m in general["messages"] if m["ts"] == posted["ts"])
        return next((m for m in home["replies"] if needle in str(m)), None)

    async def card() -> dict[str, Any] | None:
        # The card is where the high tier is reviewed, not in #general's thread.
        state = (await page.get("/_emu/state")).json()
        review = next(c for c in state["channels"] if c["name"] == "hitl-approvals")
        return next((m for m in review["messages"] if "hitl_approve" in str(m)), None)

    approval = await eventually(card, timeout_s=15)
    assert "HIGH risk" in approval["text"] and "issue_refund" in approval["text"]
    link = await eventually(lambda: reply("waits for review"), timeout_s=15)
    assert "issue_refund" in link["text"] and "hitl_approve" not in str(link)
    click = {"action_id": "hitl_approve", "channel": approval["channel"], "ts": approval["ts"]}

    async def told(user: str, *needles: str) -> bool:  # ephemerals are sent after the ack
        state = (await page.get("/_emu/state")).json()
        said = [e["text"] for e in state["ephemerals"] if e["user"] == user]
        return any(all(n in t for n in needles) for t in said)

    await page.post("/_emu/click", json={"user": "UKID", **click})
    await eventually(lambda: told("UKID", "not among its approvers"), timeout_s=15)
    # Carol is in @finance, but she asked for this refund: she may not approve it.
    await page.post("/_emu/click", json={"user": "UCAROL", **click})
    await eventually(
        lambda: told("UCAROL", "asked for by you", "<!subteam^SFINANCE>"), timeout_s=15
    )
    await page.post("/_emu/click", json={"user": "UALICE", **click})
    await eventually(lambda: reply("Done. Refunded 4200.00 USD on order A1004."), timeout_s=15)
    assert "Refund order A1004 in full ($4,200)" in printed.getvalue()
    socket = "over Socket Mode" in printed.getvalue()
    deliveries = (await page.get("/_emu/deliveries")).json()
    assert deliveries and {d["url"] == "socket_mode" for d in deliveries} == {socket}
