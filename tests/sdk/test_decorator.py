"""require_approval on sync and async functions, over Redis directly and over HTTP.

The reviewer decides from another thread through the store, as the Slack side
would; the gated function must run only after approval, exactly once, with the
approved arguments.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import AlreadyResolved, PayloadError
from bot.sdk import Cancelled, Gate, Rejected, TimedOut, require_approval
from bot.store.requests import RequestStore
from tests.sdk.conftest import Reviewer, direct_gate


def approve(req: ActionRequest) -> Decision:
    return Decision(event=Event.APPROVE, actor="UREV", payload_hash=req.payload_hash)


def reject(req: ActionRequest) -> Decision:
    return Decision(
        event=Event.REJECT,
        actor="UREV",
        payload_hash=req.payload_hash,
        reason_code="too_risky",
        text="not this customer",
    )


def edit(**new: Any) -> Callable[[ActionRequest], Decision]:
    def make(req: ActionRequest) -> Decision:
        return Decision(
            event=Event.EDIT_AND_APPROVE,
            actor="UREV",
            payload_hash=req.payload_hash,
            new_args={**req.args, **new},
        )

    return make


def timeout(req: ActionRequest) -> Decision:
    return Decision(event=Event.TIMEOUT, fence=req.version)


def days_later() -> Callable[[], int]:
    """A sweeper's clock that is a day further on at every reading."""
    days = itertools.count(1)
    return lambda: wall_ms() + next(days) * 86_400_000


Call = Callable[..., Awaitable[Any]]


@pytest.fixture(params=["async", "sync"])
def flavor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def gated(
    gate: Gate, flavor: str, calls: list[tuple[str, int]], *, fail: bool = False, **opts: Any
) -> Call:
    """A `refund(order, amount=40)` in the given flavor; sync ones are called off the loop."""

    def body(order: str, amount: int) -> str:
        calls.append((order, amount))
        if fail:
            raise RuntimeError("bank said no")
        return f"refunded {amount} on {order}"

    if flavor == "async":

        async def refund_async(order: str, amount: int = 40) -> str:
            await asyncio.sleep(0)
            return body(order, amount)

        return require_approval(gate, tool="refund", **opts)(refund_async)

    def refund(order: str, amount: int = 40) -> str:
        return body(order, amount)

    sync = require_approval(gate, tool="refund", **opts)(refund)
    return lambda *a, **kw: asyncio.to_thread(sync, *a, **kw)


async def test_approved_runs_once_with_the_args(
    gate: Gate, flavor: str, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls, run_id="run-1")
    reviewer.decide(approve)
    assert await refund("A1") == "refunded 40 on A1"
    await reviewer.ajoin()
    assert calls == [("A1", 40)]
    seen = reviewer.seen[0]
    assert seen.args == {"order": "A1", "amount": 40}  # defaults applied, for the reviewer
    assert (seen.requester, seen.run_id, seen.tool) == ("agent-7", "run-1", "refund")
    final = await wall_store.get(seen.id)
    assert final.state == State.COMPLETED
    assert final.detail == "refunded 40 on A1"  # the outcome is recorded, for card and CLI


async def test_the_recorded_outcome_is_masked_cut_and_json_for_objects(
    gate: Gate, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    results: list[Any] = [
        {"receipt": "r-1", "token": "xoxb-1234-secret"},
        "x" * 5000,
        None,
    ]

    @require_approval(gate, tool="refund")
    async def refund(order: str, amount: int = 40) -> Any:
        return results.pop(0)

    details = []
    for order in ("A1", "A2", "A3"):
        reviewer.decide(approve)
        await refund(order)
        await reviewer.ajoin()
        details.append((await wall_store.get(reviewer.seen[-1].id)).detail)
    assert details[0] == '{"receipt": "r-1", "token": "***"}'
    assert details[1] is not None and len(details[1]) == 500 and details[1].endswith("…")
    assert details[2] is None


async def test_edited_runs_with_the_edited_args(
    gate: Gate, flavor: str, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls)
    reviewer.decide(edit(amount=25))
    assert await refund("A1", amount=400) == "refunded 25 on A1"
    await reviewer.ajoin()
    assert calls == [("A1", 25)]
    final = await wall_store.get(reviewer.seen[0].id)
    assert final.state == State.COMPLETED and final.original_hash == reviewer.seen[0].payload_hash


async def test_rejected_raises_with_the_reason_and_never_runs(
    gate: Gate, flavor: str, reviewer: Reviewer
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls)
    reviewer.decide(reject)
    with pytest.raises(Rejected) as caught:
        await refund("A1")
    await reviewer.ajoin()
    assert not isinstance(caught.value, TimedOut)
    assert caught.value.reason_code == "too_risky"
    assert caught.value.text == "not this customer"
    assert caught.value.actor == "UREV"
    assert "UREV" in str(caught.value) and "not this customer" in str(caught.value)
    assert calls == []


async def test_caller_timeout_raises_withdraws_and_never_runs(
    gate: Gate, flavor: str, wall_store: RequestStore
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls, timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(TimedOut) as caught:
        await refund("A1")
    assert 0.25 < time.monotonic() - t0 < 3
    assert calls == []
    req = caught.value.request
    assert req is not None
    withdrawn = await wall_store.get(req.id)
    assert withdrawn.state == State.CANCELLED  # a late approval can no longer slip through
    assert withdrawn.resolution is not None
    assert withdrawn.resolution.reason_code == "caller_timeout"


async def test_auto_rejected_after_escalations_raises_timed_out(
    gate: Gate, flavor: str, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    """Two escalations (the caller keeps waiting through them), then the policy default."""
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls)
    reviewer.decide(timeout, timeout, timeout, clock=days_later())
    with pytest.raises(TimedOut) as caught:
        await refund("A1")
    await reviewer.ajoin()
    assert [m.request.level for m in reviewer.moved] == [1, 2, 2]
    assert reviewer.moved[-1].request.state == State.AUTO_REJECTED
    assert caught.value.reason_code == "no_response"
    assert calls == []


async def test_approved_after_an_escalation_runs(
    gate: Gate, flavor: str, reviewer: Reviewer
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls)
    reviewer.decide(timeout, approve, clock=lambda: wall_ms() + 86_400_000)
    assert await refund("A2") == "refunded 40 on A2"
    await reviewer.ajoin()
    assert calls == [("A2", 40)]


async def test_exception_is_reported_failed_and_reraised(
    gate: Gate, flavor: str, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls, fail=True)
    reviewer.decide(approve)
    with pytest.raises(RuntimeError, match="bank said no"):
        await refund("A1")
    await reviewer.ajoin()
    final = await wall_store.get(reviewer.seen[0].id)
    assert final.state == State.MANUAL_INTERVENTION
    assert final.detail == "RuntimeError: bank said no"


async def test_compensation_rolls_back(
    gate: Gate, flavor: str, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    calls: list[tuple[str, int]] = []
    undone: list[tuple[str, int]] = []

    def compensate(order: str, amount: int = 40) -> None:
        undone.append((order, amount))

    refund = gated(gate, flavor, calls, fail=True, compensate=compensate)
    reviewer.decide(approve)
    with pytest.raises(RuntimeError):
        await refund("A1", 7)
    await reviewer.ajoin()
    assert undone == [("A1", 7)]
    assert (await wall_store.get(reviewer.seen[0].id)).state == State.ROLLED_BACK


async def test_same_idempotency_key_never_runs_twice(
    gate: Gate, flavor: str, reviewer: Reviewer
) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(
        gate, flavor, calls, idempotency_key=lambda order, amount=40: f"refund-{order}-{amount}"
    )
    reviewer.decide(approve)
    await refund("A1")
    await reviewer.ajoin()
    with pytest.raises(AlreadyResolved, match="completed"):
        await refund("A1")  # the retry finds the completed request
    assert calls == [("A1", 40)]


async def test_stopped_run_raises_cancelled(gate: Gate, flavor: str, reviewer: Reviewer) -> None:
    calls: list[tuple[str, int]] = []
    refund = gated(gate, flavor, calls)

    def stop(req: ActionRequest) -> Decision:
        return Decision(event=Event.CANCEL, actor="UOPS", reason_code="run_stopped")

    reviewer.decide(stop)
    with pytest.raises(Cancelled) as caught:
        await refund("A1")
    await reviewer.ajoin()
    assert caught.value.reason_code == "run_stopped" and calls == []


async def test_arguments_that_are_not_json_are_refused_before_asking(
    gate: Gate, redis: Redis
) -> None:
    ran: list[object] = []

    @require_approval(gate)
    async def schedule(when: object) -> None:
        ran.append(when)

    with pytest.raises(PayloadError):
        await schedule(object())
    assert ran == [] and await RequestStore(redis).list_pending() == []


async def test_an_integer_json_cannot_carry_exactly_is_refused_before_asking(
    gate: Gate, redis: Redis
) -> None:
    """-1 and 400 zeros once passed a grant check as a number and raised in it (issue 41)."""
    ran: list[object] = []

    @require_approval(gate)
    async def refund(amount: int, lines: list[int]) -> None:
        ran.append(amount)

    with pytest.raises(PayloadError, match=r"argument amount is an integer beyond"):
        await refund(-(10**400), [1])
    with pytest.raises(PayloadError, match=r"argument lines\[1\] is an integer beyond"):
        await refund(5, [1, 2**53 + 1])
    assert ran == [] and await redis.keys("hitl:*req:*") == []


async def test_methods_and_excluded_parameters_are_not_reviewed(
    gate: Gate, reviewer: Reviewer
) -> None:
    class Bank:
        def __init__(self) -> None:
            self.sent: list[tuple[str, int]] = []

        @require_approval(gate, tool="transfer", exclude=("client",))
        async def transfer(self, to: str, amount: int, client: object = None) -> str:
            self.sent.append((to, amount))
            return "ok"

    bank, client = Bank(), object()
    reviewer.decide(edit(amount=5))
    assert await bank.transfer("ACME", 500, client=client) == "ok"
    await reviewer.ajoin()
    assert reviewer.seen[0].args == {"to": "ACME", "amount": 500}
    assert bank.sent == [("ACME", 5)]


async def test_an_edit_that_does_not_fit_the_signature_is_withdrawn(
    gate: Gate, reviewer: Reviewer, wall_store: RequestStore
) -> None:
    ran: list[object] = []

    # (not "refund": its policy rule reads `amount`, which this signature lacks)
    @require_approval(gate, tool="reship")
    async def refund(order: str) -> None:
        ran.append(order)

    reviewer.decide(edit(surprise=1))
    with pytest.raises(PayloadError, match="do not fit"):
        await refund("A1")
    await reviewer.ajoin()
    assert ran == []
    assert (await wall_store.get(reviewer.seen[0].id)).state == State.CANCELLED


async def test_sync_function_called_inside_a_running_loop(gate: Gate, reviewer: Reviewer) -> None:
    """Blocking the test's loop is fine: the gate's I/O runs on its private loop."""
    calls: list[str] = []

    @require_approval(gate, tool="reship")
    def refund(order: str) -> str:
        calls.append(order)
        return "done"

    reviewer.decide(approve)
    assert refund("A9") == "done"  # called straight from this coroutine
    reviewer.join()
    assert calls == ["A9"]


async def test_decorated_functions_keep_their_signature(gate: Gate) -> None:
    import inspect

    async def refund(order: str, amount: int = 40) -> str:
        """Refund an order."""
        return order

    wrapped = require_approval(gate)(refund)
    assert inspect.signature(wrapped) == inspect.signature(refund)
    assert wrapped.__name__ == "refund" and wrapped.__doc__ == "Refund an order."
    assert inspect.iscoroutinefunction(wrapped)


async def test_no_sweeper_past_the_deadline_times_out(
    redis_url: str, policy: Policy, wall_store: RequestStore
) -> None:
    """Nothing escalates a request past its deadline: after the grace, withdraw and raise."""
    quick = policy.model_copy(
        update={
            "tiers": {
                t: tp.model_copy(update={"review_timeout": 200, "escalation": ()})
                for t, tp in policy.tiers.items()
            }
        }
    )
    gate = direct_gate(redis_url, quick, sweeper_grace_s=0.3)
    ran: list[str] = []

    # (not "refund": its policy rule reads `amount`, which this signature lacks)
    @require_approval(gate, tool="reship")
    async def refund(order: str) -> None:
        ran.append(order)

    try:
        t0 = time.monotonic()
        with pytest.raises(TimedOut, match="nothing escalated it") as caught:
            await refund("A1")
        assert 0.4 < time.monotonic() - t0 < 3
    finally:
        await gate.aclose()
    assert ran == []
    assert caught.value.request is not None
    assert (await wall_store.get(caught.value.request.id)).state == State.CANCELLED
