"""A run's questions are read through the run's index, never a SCAN, and every question
leaves the store on a schedule (as a run does)."""

from __future__ import annotations

import json
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster

from bot.clock import FakeClock
from bot.core.models import QuestionState
from bot.store import keys
from bot.store.run.questions import QuestionStore
from bot.store.run.runs import RUN_TTL_S, RunStore
from bot.store.scripts.common import QUESTION_TTL_S
from tests.cli.test_cli import cli
from tests.support.poll import eventually

HOUR_MS = 3_600_000


async def _scans(redis: Redis) -> int:
    """SCAN commands the store has served, summed over every node of a cluster."""
    if isinstance(redis, RedisCluster):
        per_node = [
            await redis.info("commandstats", target_nodes=node) for node in redis.get_nodes()
        ]
    else:
        per_node = [await redis.info("commandstats")]
    stats = [cast(dict[str, Any], i).get("cmdstat_scan", {}) for i in per_node]
    return sum(int(s.get("calls", 0)) for s in stats)


async def _index(redis: Redis, run_id: str) -> list[str]:
    return sorted(cast(list[str], await redis.zrange(keys.run_questions(run_id), 0, -1)))


async def test_the_index_agrees_with_the_records_after_asks_answers_expiries_and_cancels(
    questions: QuestionStore, redis: Redis, clock: FakeClock
) -> None:
    answered = await questions.ask("Which region?", timeout_ms=HOUR_MS, run_id="run-a")
    expired = await questions.ask("Ship it?", timeout_ms=1_000, run_id="run-a")
    cancelled = await questions.ask("Which branch?", timeout_ms=HOUR_MS, run_id="run-a")
    still_open = await questions.ask("Retry?", timeout_ms=HOUR_MS, run_id="run-a")
    other = await questions.ask("Elsewhere?", timeout_ms=HOUR_MS, run_id="run-b")
    await questions.ask("No run?", timeout_ms=HOUR_MS)

    await questions.answer(answered.id, actor="U1", answer="eu")
    clock.advance(2_000)
    assert await questions.timeout(expired.id)
    await questions.cancel(cancelled.id)

    mine = [answered, expired, cancelled, still_open]
    assert await _index(redis, "run-a") == sorted(q.id for q in mine)
    got = await questions.of_run("run-a")
    assert [q.id for q in got] == [q.id for q in mine]
    assert [q.state for q in got] == [
        QuestionState.ANSWERED,
        QuestionState.EXPIRED,
        QuestionState.CANCELLED,
        QuestionState.OPEN,
    ]
    assert [q.id for q in await questions.of_run("run-b")] == [other.id]
    assert await questions.of_run("run-none") == []
    # what the run waits on is still only its open question
    assert await redis.smembers(keys.run_waiting("run-a")) == {still_open.id}


async def test_questions_expire_like_runs_and_the_index_outlives_them(
    questions: QuestionStore, redis: Redis
) -> None:
    assert QUESTION_TTL_S == RUN_TTL_S
    final = await questions.ask("Which region?", timeout_ms=HOUR_MS, run_id="run-a")
    still_open = await questions.ask("Retry?", timeout_ms=10 * HOUR_MS, run_id="run-a")
    loose = await questions.ask("No run?", timeout_ms=HOUR_MS)
    await questions.answer(final.id, actor="U1", answer="eu")

    # final: kept as long as a run is; open: that long past its deadline, so the
    # sweeper still finds it; a question under no run expires all the same
    assert 0 < await redis.ttl(keys.question(final.id)) <= QUESTION_TTL_S
    open_ttl = await redis.ttl(keys.question(still_open.id))
    assert QUESTION_TTL_S + 10 * 3600 - 60 < open_ttl <= QUESTION_TTL_S + 10 * 3600
    assert 0 < await redis.ttl(keys.question(loose.id)) <= QUESTION_TTL_S + 3600
    assert await redis.ttl(keys.run_questions("run-a")) >= open_ttl


async def test_an_entry_naming_no_record_is_left_out(
    questions: QuestionStore, redis: Redis
) -> None:
    kept = await questions.ask("Which region?", timeout_ms=HOUR_MS, run_id="run-a")
    gone = await questions.ask("Retry?", timeout_ms=HOUR_MS, run_id="run-a")
    await redis.pexpire(keys.question(gone.id), 1)  # its time ran out
    # a crash between the index and the record: an entry whose record was never written
    await redis.zadd(keys.run_questions("run-a"), {"q-never-written": 1})

    await eventually(lambda: redis.exists(keys.question(gone.id)), lambda n: n == 0)
    assert [q.id for q in await questions.of_run("run-a")] == [kept.id]


async def test_show_run_lists_its_questions_without_a_scan(
    questions: QuestionStore, redis: Redis, redis_url: str
) -> None:
    run = await RunStore(redis).start(agent="triage", prompt="look", requester="U1")
    first = await questions.ask("Which region?", timeout_ms=HOUR_MS, run_id=run.id)
    second = await questions.ask("Ship it?", timeout_ms=HOUR_MS, run_id=run.id)
    await questions.answer(first.id, actor="U1", answer="eu")
    for i in range(20):  # other runs' questions, which the run must not read through
        await questions.ask(f"other {i}?", timeout_ms=HOUR_MS, run_id=f"run-other{i}")

    before = await _scans(redis)
    code, out, err = await cli("show", run.id, "--json", redis_url=redis_url)
    assert code == 0, err
    assert await _scans(redis) == before
    shown = json.loads(out)["questions"]
    assert [(q["id"], q["state"]) for q in shown] == [
        (first.id, "answered"),
        (second.id, "open"),
    ]


async def test_maintenance_indexes_questions_asked_before_the_index(
    redis: Redis, redis_url: str
) -> None:
    questions = QuestionStore(redis)  # the wall clock, as the command's
    answered = await questions.ask("Which region?", timeout_ms=HOUR_MS, run_id="run-a")
    await questions.answer(answered.id, actor="U1", answer="eu")
    still_open = await questions.ask("Retry?", timeout_ms=HOUR_MS, run_id="run-a")
    loose = await questions.ask("No run?", timeout_ms=HOUR_MS)
    # as a store from before the index and the TTL left them
    await redis.delete(keys.run_questions("run-a"), keys.loose_questions(keys.shard_of(loose.id)))
    for q in (answered, still_open, loose):
        await redis.persist(keys.question(q.id))
    assert await questions.of_run("run-a") == []

    code, out, err = await cli("maintenance", "index-questions", redis_url=redis_url)
    assert code == 0, err
    assert "Checked 3 questions" in out
    assert [q.id for q in await questions.of_run("run-a")] == [answered.id, still_open.id]
    for q in (answered, still_open, loose):
        assert 0 < await redis.ttl(keys.question(q.id)) <= QUESTION_TTL_S + 3600
    assert await redis.ttl(keys.run_questions("run-a")) > 0
    # the one outside any run, where retention looks for it (bot/store/retire_questions.py)
    assert await redis.zscore(keys.loose_questions(keys.shard_of(loose.id)), loose.id) == (
        loose.asked_at
    )
