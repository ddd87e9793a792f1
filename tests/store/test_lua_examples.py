"""Explicit histories where Lua and the pure machine must agree, run on every test run.

Random histories (test_lua_matches_core.py) reach a deadline's last millisecond
or a later level's assignee only by luck. This table walks each timer to 1 ms
before, at and 1 ms after its deadline, each escalation level's eligibility and
every refusal code, and checks each step's outcome as well as Lua == machine.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.policy import parse_policy
from bot.store.requests import RequestStore
from tests.conftest import QUORUM_POLICY
from tests.store.lua_vs_core import REFUSAL_CODE, TOKENS, compare, decision
from tests.support.keys import serve_signer

MIN = 60_000
REVIEW, LEVEL2, CLAIM, EXEC = 10 * MIN, 5 * MIN, 10 * MIN, 15 * MIN

_raw = copy.deepcopy(QUORUM_POLICY)
# Low risk here auto-approves when nobody answers, lets requesters approve their own
# requests and forbids edits, so each of those branches has an example below.
_raw["tiers"]["low"].update(on_exhausted="auto_approved", self_approval=True, allow_edit=False)
_raw["tools"]["note"] = {"tier": "low"}
POLICY = parse_policy(_raw)

MEDIUM = ("refund", {"amount": 5})  # approvers "*"; levels UONCALL then ULEAD
HIGH = ("refund", {"amount": 5000})  # approvers UBOSS and group SFINANCE only
CRITICAL = ("deploy", {"v": 1})  # two approvals
LOW = ("note", {"text": "hi"})


def st(event: str, actor: str = "U2", advance: int = 0, **kw: Any) -> dict[str, Any]:
    s = dict(event=event, actor=actor, advance=advance, groups=(), hash_ok=True, reason=None)
    return {**s, "edit": None, "fence": "current", "comp": False, **kw}


def tick(advance: int) -> dict[str, Any]:
    return st("timeout", "system", advance)


APPROVE, CLAIMED = st("approve"), st("claim", "worker")

# (call, steps, the outcome of each step: a state, "noop", "repeat" or a refusal code)
EXAMPLES: dict[str, tuple[tuple[str, dict[str, Any]], list[dict[str, Any]], list[str]]] = {
    "review timer 1 ms early": (MEDIUM, [tick(REVIEW - 1)], ["noop"]),
    "review timer at deadline": (MEDIUM, [tick(REVIEW)], ["pending_review"]),
    "review timer 1 ms late": (MEDIUM, [tick(REVIEW + 1)], ["pending_review"]),
    "approve 1 ms before deadline": (MEDIUM, [st("approve", advance=REVIEW - 1)], ["approved"]),
    "approve at deadline": (MEDIUM, [st("approve", advance=REVIEW)], ["expired"]),
    "reject after deadline": (
        MEDIUM,
        [st("reject", advance=REVIEW + 1, reason="policy")],
        ["expired"],
    ),
    "stale fence": (MEDIUM, [{**tick(REVIEW), "fence": "old"}], ["noop"]),
    "unfenced timer at deadline": (MEDIUM, [{**tick(REVIEW), "fence": "none"}], ["pending_review"]),
    "level 1 timer then level 2 timer then exhausted": (
        MEDIUM,
        [
            tick(REVIEW),
            tick(REVIEW - 1),
            tick(1),
            tick(LEVEL2 - 1),
            tick(1),
            tick(MIN),
        ],
        ["pending_review", "noop", "pending_review", "noop", "auto_rejected", "noop"],
    ),
    "level 1 decision just before its deadline": (
        MEDIUM,
        [tick(REVIEW), st("approve", "UONCALL", REVIEW - 1)],
        ["pending_review", "approved"],
    ),
    "level 1 decision at its deadline": (
        MEDIUM,
        [tick(REVIEW), st("approve", "UONCALL", REVIEW)],
        ["pending_review", "expired"],
    ),
    "level 0: later levels may not decide": (
        HIGH,
        [
            st("approve", "UONCALL"),
            st("approve", "ULEAD"),
            st("reject", "UONCALL", reason="policy"),
            st("approve", "U2", groups=("SFINANCE",)),
        ],
        ["not_eligible", "not_eligible", "not_eligible", "approved"],
    ),
    "level 0: named approver": (HIGH, [st("approve", "UBOSS", text="fine")], ["approved"]),
    "level 1: its assignee may decide, level 2's may not": (
        HIGH,
        [tick(REVIEW), st("approve", "ULEAD"), st("approve", "UONCALL")],
        ["pending_review", "not_eligible", "approved"],
    ),
    "level 2: its assignee may decide": (
        HIGH,
        [tick(REVIEW), tick(REVIEW), st("approve", "ULEAD")],
        ["pending_review", "pending_review", "approved"],
    ),
    "exhausted high risk never auto-approves": (
        HIGH,
        [tick(REVIEW), tick(REVIEW), tick(LEVEL2)],
        ["pending_review", "pending_review", "auto_rejected"],
    ),
    "exhausted low risk auto-approves, then its claim timer": (
        LOW,
        [tick(REVIEW), tick(REVIEW), tick(LEVEL2), tick(CLAIM - 1), tick(1)],
        ["pending_review", "pending_review", "auto_approved", "noop", "cancelled"],
    ),
    "requester may not approve their own request": (
        MEDIUM,
        [st("approve", "U1"), st("reject", "U1", reason="other")],
        ["not_eligible", "cancelled"],
    ),
    "requester may approve where the tier allows it": (LOW, [st("approve", "U1")], ["approved"]),
    "stale payload": (MEDIUM, [st("approve", hash_ok=False)], ["stale_payload"]),
    "reject without a known reason": (MEDIUM, [st("reject", reason="bogus")], ["invalid"]),
    "reject with a reason": (
        MEDIUM,
        [st("reject", reason="too_risky", text="wrong customer")],
        ["cancelled"],
    ),
    "an approver repeats after another's rejection": (
        CRITICAL,
        [APPROVE, st("reject", "U3", reason="policy"), APPROVE],
        ["pending_review", "cancelled", "already_resolved"],
    ),
    "edit where the tier forbids it": (LOW, [st("edit_and_approve", edit={"t": 1})], ["invalid"]),
    "edit without arguments": (MEDIUM, [st("edit_and_approve")], ["invalid"]),
    "edit and approve": (MEDIUM, [st("edit_and_approve", edit={"amount": 1})], ["approved"]),
    "already resolved": (
        MEDIUM,
        [APPROVE, st("reject", "U3", reason="policy"), st("approve", "U3")],
        ["approved", "already_resolved", "already_resolved"],
    ),
    "quorum of two, with a repeat": (
        CRITICAL,
        [APPROVE, APPROVE, st("approve", "U3")],
        ["pending_review", "repeat", "approved"],
    ),
    "an edit lapses earlier approvals": (
        CRITICAL,
        [APPROVE, st("edit_and_approve", "U3", edit={"v": 2}), st("approve", "U3")],
        ["pending_review", "pending_review", "repeat"],
    ),
    "claim 1 ms before its deadline": (
        MEDIUM,
        [APPROVE, st("claim", "worker", CLAIM - 1)],
        ["approved", "executing"],
    ),
    "claim at its deadline": (
        MEDIUM,
        [APPROVE, st("claim", "worker", CLAIM), tick(0)],
        ["approved", "expired", "cancelled"],
    ),
    "claim timer 1 ms early": (MEDIUM, [APPROVE, tick(CLAIM - 1)], ["approved", "noop"]),
    "execution timer before and at its deadline": (
        MEDIUM,
        [APPROVE, CLAIMED, tick(EXEC - 1), tick(1)],
        ["approved", "executing", "noop", "manual_intervention"],
    ),
    "rollback timer before and at its deadline": (
        MEDIUM,
        [APPROVE, CLAIMED, st("fail", "worker", comp=True), tick(EXEC - 1), tick(1)],
        ["approved", "executing", "rollback_pending", "noop", "manual_intervention"],
    ),
    "failure without a compensating action": (
        MEDIUM,
        [APPROVE, CLAIMED, st("fail", "worker")],
        ["approved", "executing", "manual_intervention"],
    ),
    "rollback reported": (
        MEDIUM,
        [APPROVE, CLAIMED, st("fail", "worker", comp=True), st("rollback_ok", "worker")],
        ["approved", "executing", "rollback_pending", "rolled_back"],
    ),
    "success, then a late decision": (
        MEDIUM,
        [APPROVE, CLAIMED, st("succeed", "worker"), st("approve", "U3")],
        ["approved", "executing", "completed", "already_resolved"],
    ),
    "cancel with a reason, then a decision": (
        MEDIUM,
        [st("cancel", "system", reason="run_stopped", text="stopped"), st("approve", "U3")],
        ["cancelled", "already_resolved"],
    ),
    "cancel without a reason": (MEDIUM, [st("cancel", "system")], ["cancelled"]),
    "claim before approval": (MEDIUM, [CLAIMED], ["invalid"]),
    "claim after a rejection": (
        MEDIUM,
        [st("reject", reason="too_risky"), CLAIMED, CLAIMED],
        ["cancelled", "already_resolved", "already_resolved"],
    ),
    "a claim retried with its token, then another executor's claim": (
        MEDIUM,
        [APPROVE, CLAIMED, CLAIMED, st("claim", "worker", token=TOKENS[1])],
        ["approved", "executing", "repeat", "already_resolved"],
    ),
    "a report holding its claim's fence": (
        MEDIUM,
        [
            APPROVE,
            CLAIMED,
            st("fail", "worker", comp=True, held="current"),
            st("rollback_ok", "worker", held="current"),
        ],
        ["approved", "executing", "rollback_pending", "rolled_back"],
    ),
    "a report holding a superseded claim's fence": (
        MEDIUM,
        [APPROVE, CLAIMED, st("succeed", "worker", held="stale"), st("succeed", "worker")],
        ["approved", "executing", "stale_fence", "completed"],
    ),
    "a stale report after the request completed": (
        MEDIUM,
        [
            APPROVE,
            CLAIMED,
            st("succeed", "worker", held="current"),
            st("fail", "worker", held="stale"),
        ],
        ["approved", "executing", "completed", "stale_fence"],
    ),
}


def test_the_examples_cover_every_refusal_code() -> None:
    seen = {outcome for _, _, outcomes in EXAMPLES.values() for outcome in outcomes}
    assert set(REFUSAL_CODE.values()) <= seen


@pytest.mark.parametrize("name", list(EXAMPLES))
async def test_lua_and_core_agree_on(name: str, redis: Redis, clock: FakeClock) -> None:
    (tool, args), steps, outcomes = EXAMPLES[name]
    store = RequestStore(redis, clock=clock, signer=serve_signer())  # serve's: it applies defaults
    model = (await store.create(POLICY, tool=tool, args=args, requester="U1")).request
    seen = []
    for s in steps:
        clock.advance(s["advance"])
        model, outcome = await compare(redis, store, model, decision(s, model), clock.now)
        seen.append(outcome)
    assert seen == outcomes
