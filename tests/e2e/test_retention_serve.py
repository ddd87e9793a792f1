"""serve retires finished history on its own schedule (HITL_RETENTION_CHECK_S): what
ended before HITL_RETENTION leaves Redis for the archive, what waits for a person stays
and still reaches them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.core.models import Decision
from bot.core.policy import parse_policy
from bot.core.states import Event, State
from bot.store import archive, keys
from bot.store.requests import RequestStore
from tests.e2e.conftest import POLICY, Bot
from tests.support.keys import serve_signer
from tests.support.poll import eventually

DAY = 86_400_000


@pytest.fixture
def serve_env(tmp_path: Path) -> dict[str, Any]:
    return {
        "hitl_retention": "30d",
        "hitl_retention_check_s": 0.05,
        "hitl_archive_dir": tmp_path / "archive",
    }


async def test_serve_moves_what_ended_to_the_archive_and_keeps_what_waits(
    bot: Bot, tmp_path: Path
) -> None:
    store = RequestStore(bot.redis, clock=bot.clock, signer=serve_signer())
    policy = parse_policy(POLICY)
    done = (
        await store.create(policy, tool="refund", args={"amount": 5}, requester="agent:t")
    ).request
    await store.transition(
        done.id,
        Decision(
            event=Event.REJECT,
            actor="UALICE",
            actor_groups=("#hitl-approvals",),
            reason_code="too_risky",
            payload_hash=done.payload_hash,
        ),
    )
    bot.clock.advance(31 * DAY)
    waiting = await bot.propose("refund", {"amount": 7})
    await eventually(lambda: _gone(bot, done.id), what="the finished request retired")
    assert (await store.get(waiting)).state == State.PENDING_REVIEW
    await bot.message_of(waiting)  # its card still reaches the reviewers
    newest = await archive.newest(bot.redis)
    assert newest is not None and (tmp_path / "archive" / newest[0]).is_file()


async def _gone(bot: Bot, rid: str) -> bool:
    return not await bot.redis.exists(keys.request(rid))
