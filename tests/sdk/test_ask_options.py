"""`gate.ask(..., options=[...])` in both modes: the answer is the option chosen, with who."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from bot.core.models import QuestionState
from bot.errors import NotAnOption, PayloadError
from bot.sdk import Gate
from bot.store.run.questions import QuestionStore
from tests.support.poll import eventually


async def _open_question(redis: Redis) -> str:
    qs = QuestionStore(redis)

    async def open_ids() -> list[str]:
        ids = [k.rpartition(":")[2] for k in await redis.keys("hitl:*:q:*")]
        return [i for i in ids if (await qs.get(i)).state == QuestionState.OPEN]

    return str((await eventually(open_ids, what="an open question"))[0])


async def test_ask_with_options_returns_the_option_and_who_chose_it(
    gate: Gate, redis: Redis
) -> None:
    asking = asyncio.create_task(
        gate.ask_answer("Which order?", options=["A1", "A2"], timeout=10, run_id="run-1")
    )
    qid = await _open_question(redis)
    qs = QuestionStore(redis)
    assert (await qs.get(qid)).options == ("A1", "A2")
    # The store takes only one of the options: anything else is refused, nothing changes.
    with pytest.raises(NotAnOption, match=r"A1 \| A2"):
        await qs.answer(qid, actor="UKID", answer="A3")
    assert (await qs.get(qid)).state == QuestionState.OPEN
    await qs.answer(qid, actor="UKID", answer="A2")
    q = await asyncio.wait_for(asking, 10)
    assert (q.answer, q.answered_by) == ("A2", "UKID")


@pytest.mark.parametrize(
    "options", [[f"o{i}" for i in range(11)], ["x" * 76], ["same", "Same"], [""]]
)
async def test_options_out_of_bounds_are_refused_before_asking(
    gate: Gate, redis: Redis, options: list[str]
) -> None:
    with pytest.raises(PayloadError, match="option"):
        await gate.ask("?", options=options, timeout=5)
    assert await redis.keys("hitl:*:q:*") == []
