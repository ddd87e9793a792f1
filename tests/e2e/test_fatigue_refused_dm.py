"""A fatigue message Slack refuses for one operator: that operator is tried again at the
next check, and the others, already told, are not told twice (each operator is claimed
on their own for the day)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import POLICY, Bot
from tests.e2e.test_fatigue_signals import (
    OPERATOR,
    _a_check_after_now,
    serve_env,  # noqa: F401  (the fixture: a check every 50 ms)
    three_signals,
    told,
)
from tests.support.poll import eventually

GHOST = "UGHOST"  # no such user: Slack answers conversations.open with user_not_found


@pytest.fixture(autouse=True)
def operators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(POLICY, "operators", [OPERATOR, GHOST])


async def test_one_operator_slack_refuses_does_not_retell_the_others(bot: Bot) -> None:
    await three_signals(bot)

    async def all_three() -> bool:
        return len(told(bot)) >= 3

    await eventually(all_three, what="three fatigue messages to the operator Slack knows")
    for _ in range(3):  # each check tries the ghost again, and fails again
        await _a_check_after_now(bot)
    got = told(bot)
    assert len(got) == 3, got  # Carol is told each signal once, not at every check
    assert all(OPERATOR in members for _, members, _ in got)
