from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.policy import Policy, parse_policy
from bot.store.questions import QuestionStore
from bot.store.requests import RequestStore

QUORUM_POLICY = {
    "tiers": {
        tier: {
            "review_timeout": "10m",
            "reviewers": {"channels": ["#approvals"]},
            "escalation": [{"users": ["UONCALL"]}, {"users": ["ULEAD"], "timeout": "5m"}],
            "approvals_required": 2 if tier == "critical" else 1,
            "approvers": ["*"] if tier != "high" else ["UBOSS", "SFINANCE"],
        }
        for tier in ("low", "medium", "high", "critical")
    },
    "tools": {
        "move_claw": {"tier": "low", "review": "none"},
        "refund": {"tier": "medium", "rules": [{"if": "amount > 1000", "tier": "high"}]},
        "deploy": {"tier": "critical"},
    },
}


@pytest.fixture
def policy() -> Policy:
    return parse_policy(QUORUM_POLICY)


@pytest.fixture
def ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"r{next(counter):05d}"


@pytest.fixture
def store(redis: Redis, clock: FakeClock, ids: Callable[[], str]) -> RequestStore:
    return RequestStore(redis, clock=clock, ids=ids)


@pytest.fixture
def questions(redis: Redis, clock: FakeClock, ids: Callable[[], str]) -> QuestionStore:
    return QuestionStore(redis, clock=clock, ids=lambda: "q" + ids())
