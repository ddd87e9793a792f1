"""Retention: finished requests and runs leave the live store once the archive holds them,
and nothing else leaves, twice, or unchecked (bot/store/retire.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision, RunState
from bot.core.policy import Policy
from bot.core.proof.archive import parse
from bot.core.states import Event, State
from bot.store import archive, keys, retire, retire_questions
from bot.store.archive_audit import findings
from bot.store.requests import RequestStore
from bot.store.retire import Retention
from bot.store.run.questions import QuestionStore
from bot.store.run.runs import RUN_TTL_S, RunStore
from tests.support.keys import serve_signer

DAY = 86_400_000
KEEP = 90 * DAY
RUN_TTL_MS = RUN_TTL_S * 1000


@pytest.fixture
def store(signed_store: RequestStore) -> RequestStore:
    return signed_store


def retention(redis: Redis, clock: FakeClock, where: Path) -> Retention:
    signer = serve_signer()
    return Retention(redis, signer, where, signer.public().verify, clock)


async def _rejected(store: RequestStore, policy: Policy, amount: int) -> str:
    req = (
        await store.create(policy, tool="refund", args={"amount": amount}, requester="U1")
    ).request
    await store.transition(
        req.id,
        Decision(
            event=Event.REJECT,
            actor="U2",
            reason_code="too_risky",
            text="no",
            payload_hash=req.payload_hash,
        ),
    )
    return req.id


async def _completed(store: RequestStore, policy: Policy, amount: int) -> str:
    req = (
        await store.create(policy, tool="refund", args={"amount": amount}, requester="U1")
    ).request
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    await store.transition(req.id, Decision(event=Event.CLAIM, actor="w1"))
    await store.transition(req.id, Decision(event=Event.SUCCEED, detail="ok"))
    return req.id


async def _exists(redis: Redis, rid: str) -> bool:
    return bool(await redis.exists(keys.request(rid), keys.audit(rid)))


async def test_finished_requests_leave_only_after_the_period_and_only_whole(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    done = [await _rejected(store, policy, 10), await _completed(store, policy, 20)]
    waiting = (
        await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")
    ).request
    approved = (
        await store.create(policy, tool="refund", args={"amount": 6}, requester="U1")
    ).request
    await store.transition(
        approved.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=approved.payload_hash)
    )
    before = {rid: await redis.lrange(keys.audit(rid), 0, -1) for rid in done}
    assert await store.count() == 4  # the demo's banner: index sizes, not every id read
    r = retention(redis, clock, tmp_path)

    clock.advance(KEEP - 1)  # not yet
    assert (await r.pass_once(KEEP, RUN_TTL_MS)).segment is None
    assert all([await _exists(redis, rid) for rid in done])

    clock.advance(2)
    got = await r.pass_once(KEEP, RUN_TTL_MS)
    assert got.requests == 2 and got.segment is not None
    for rid in done:
        assert not await _exists(redis, rid)
        assert not await redis.exists(keys.posts(rid), keys.wake(rid))
    # Unfinished ones stay, whatever their age: one waits for a person, one to be claimed.
    assert (await store.get(waiting.id)).state == State.PENDING_REVIEW
    assert (await store.get(approved.id)).state == State.APPROVED
    assert set(await store.ids_between()) == {waiting.id, approved.id}
    assert await store.count() == 2
    # The archive holds each history exactly as it stood, sealed.
    found = archive.read(
        tmp_path, serve_signer().public().verify, got_newest(await archive.newest(redis))
    )
    assert found.problems == []
    assert {r["id"]: r["audit"] for r in found.requests()} == before
    assert list(findings(found, serve_signer().public().verify)) == []
    # A second pass has nothing to do and writes nothing.
    assert (await r.pass_once(KEEP, RUN_TTL_MS)).segment is None
    assert len(list(tmp_path.glob("segment-*"))) == 1


def got_newest(newest: tuple[str, str] | None) -> str | None:
    return newest[1] if newest else None


async def test_a_history_that_does_not_verify_stays_to_be_looked_at(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    good, bad = await _rejected(store, policy, 10), await _rejected(store, policy, 20)
    line = await redis.lindex(keys.audit(bad), 1) or ""
    await redis.lset(keys.audit(bad), 1, line.replace('"actor":"U2"', '"actor":"U9"'))
    clock.advance(KEEP + 1)
    got = await retention(redis, clock, tmp_path).pass_once(KEEP, RUN_TTL_MS)
    assert got.kept == [bad]
    assert got.requests == 1 and not await _exists(redis, good)
    assert await _exists(redis, bad)  # still where `audit verify` names it


async def test_a_pass_that_lost_the_race_writes_and_removes_nothing(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    """Two serve processes whose lease overlapped (a pause longer than it): both read the
    same records, one extends the chain, the other's segment joins nothing."""
    ids = [await _rejected(store, policy, n) for n in range(1, 4)]
    clock.advance(KEEP + 1)
    a, b = retention(redis, clock, tmp_path), retention(redis, clock, tmp_path)
    late = await a.collect(KEEP, RUN_TTL_MS)
    first = await b.pass_once(KEEP, RUN_TTL_MS)
    second = await a.commit(late)
    assert first.requests == 3 and second.segment is None and second.requests == 0
    assert len(list(tmp_path.glob("segment-*"))) == 1
    found = archive.read(
        tmp_path, serve_signer().public().verify, got_newest(await archive.newest(redis))
    )
    assert found.problems == []  # no fork, no orphan
    assert sorted(r["id"] for r in found.requests()) == sorted(ids)


async def test_a_record_that_moved_after_it_was_archived_stays(
    store: RequestStore, policy: Policy, redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    rid = await _rejected(store, policy, 10)
    clock.advance(KEEP + 1)
    r = retention(redis, clock, tmp_path)
    records, _heads, _ = await r._requests(clock() - KEEP)
    # An entry lands between the read and the delete: the archived copy is stale.
    await redis.rpush(keys.audit(rid), "{}")
    await redis.hset(keys.request(rid), "audit_head", "moved")
    assert await r._drop(records) == (0, 0, 0)
    assert await _exists(redis, rid)


async def test_finished_runs_leave_with_their_audit_and_questions(
    redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    runs = RunStore(redis, clock=clock)
    run = await runs.start(agent="claw", prompt="go", requester="U1")
    live = await runs.start(agent="claw", prompt="still going", requester="U1")
    await redis.rpush(keys.run_audit(run.id), json.dumps({"kind": "steer", "text": "left"}))
    await runs.update(run.id, state=RunState.FINISHED)
    # Runs leave before their own 30-day expiry would take them uncopied.
    clock.advance(29 * DAY)
    got = await retention(redis, clock, tmp_path).pass_once(KEEP, RUN_TTL_MS)
    assert got.runs == 1
    assert not await redis.exists(keys.run(run.id), keys.run_audit(run.id))
    assert await redis.exists(keys.run(live.id))
    assert run.id not in await redis.zrange(keys.RUNS_ALL, 0, -1)
    assert got.segment is not None
    seg = parse(got.segment.read_text(), serve_signer().public().verify)
    (kept,) = [r for r in seg.records if r["kind"] == "run"]
    assert kept["id"] == run.id and kept["audit"] == [json.dumps({"kind": "steer", "text": "left"})]


async def _loose(redis: Redis) -> set[str]:
    out: set[str] = set()
    for shard in range(keys.SHARDS):
        out |= set(await redis.zrange(keys.loose_questions(shard), 0, -1))
    return out


async def test_questions_outside_runs_go_to_the_archive_before_they_expire(
    redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    """An MCP elicitation's answer is a person's word: it used to expire after 30 days
    with nothing kept. Now it leaves at the runs' cut, into the archive."""
    qs = QuestionStore(redis, clock=clock)
    answered = await qs.ask("Which region?", timeout_ms=3_600_000, channel="C1", owner="mcp")
    await qs.answer(answered.id, actor="U2", answer="eu-west-1")
    waiting = await qs.ask("Still there?", timeout_ms=60 * DAY, channel="C1")
    run = await RunStore(redis, clock=clock).start(agent="claw", prompt="go", requester="U1")
    under_run = await qs.ask("Which one?", timeout_ms=3_600_000, run_id=run.id)
    gone = await qs.ask("Asked before the index", timeout_ms=3_600_000, channel="C1")
    await redis.delete(keys.question(gone.id))  # its record expired on its own
    assert await _loose(redis) == {answered.id, waiting.id, gone.id}  # a run's are the run's

    clock.advance(20 * DAY)
    assert (await retention(redis, clock, tmp_path).pass_once(KEEP, RUN_TTL_MS)).questions == 0
    assert await redis.exists(keys.question(answered.id))

    clock.advance(9 * DAY)
    got = await retention(redis, clock, tmp_path).pass_once(KEEP, RUN_TTL_MS)
    assert got.questions == 1 and got.segment is not None
    assert not await redis.exists(keys.question(answered.id))
    assert await redis.exists(keys.question(waiting.id), keys.question(under_run.id)) == 2
    assert await _loose(redis) == {waiting.id}  # the expired one's entry went too
    seg = parse(got.segment.read_text(), serve_signer().public().verify)
    (kept,) = [r for r in seg.records if r["kind"] == "question"]
    assert kept["id"] == answered.id
    assert (kept["fields"]["answer"], kept["fields"]["answered_by"]) == ("eu-west-1", "U2")


async def test_a_question_that_moved_after_it_was_archived_stays(
    redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    qs = QuestionStore(redis, clock=clock)
    q = await qs.ask("Which region?", timeout_ms=3_600_000, channel="C1")
    await qs.answer(q.id, actor="U2", answer="eu")
    clock.advance(29 * DAY)
    ret = retention(redis, clock, tmp_path)
    picked = await ret.collect(KEEP, RUN_TTL_MS)
    await redis.hset(keys.question(q.id), "version", "99")  # written between read and drop
    got = await ret.commit(picked)
    assert got.segment is not None and got.questions == 0
    assert await redis.exists(keys.question(q.id))


async def test_a_pass_holds_at_most_a_batch_of_each_kind(
    store: RequestStore,
    policy: Policy,
    redis: Redis,
    clock: FakeClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One segment is at most BATCH requests, BATCH runs and BATCH questions (a page of
    ids once carried a pass to nearly twice that); the rest goes in the next pass."""
    monkeypatch.setattr(retire, "BATCH", 3)
    monkeypatch.setattr(retire_questions, "BATCH", 3)
    # Each kind starts with records that stay (unfinished), so its first page of ids
    # holds fewer than a batch and a second page is read: the requests on one shard.
    one_shard = (f"r{n:05d}" for n in range(100_000) if keys.shard_of(f"r{n:05d}") == 0)
    store = RequestStore(redis, clock=clock, ids=lambda: next(one_shard), signer=serve_signer())
    for n in range(2):
        made = await store.create(policy, tool="refund", args={"amount": n}, requester="U1")
        d = Decision(event=Event.APPROVE, actor="U2", payload_hash=made.request.payload_hash)
        await store.transition(made.request.id, d)
        clock.advance(1)  # ids by time: these first
    for n in range(5):
        await _rejected(store, policy, 10 + n)
        clock.advance(1)
    runs = RunStore(redis, clock=clock)
    await runs.start(agent="claw", prompt="still going", requester="U1")
    for _ in range(4):
        run = await runs.start(agent="claw", prompt="go", requester="U1")
        await runs.update(run.id, state=RunState.FINISHED)
    qs = QuestionStore(redis, clock=clock)
    await qs.ask("Still open?", timeout_ms=400 * DAY, channel="C1")
    clock.advance(1)
    for n in range(4):
        q = await qs.ask(f"Which {n}?", timeout_ms=3_600_000, channel="C1")
        await qs.answer(q.id, actor="U2", answer="this")
    clock.advance(KEEP + 1)
    r = retention(redis, clock, tmp_path)
    first = await r.pass_once(KEEP, RUN_TTL_MS)
    assert (first.requests, first.runs, first.questions) == (3, 3, 3)
    second = await r.pass_once(KEEP, RUN_TTL_MS)
    assert (second.requests, second.runs, second.questions) == (2, 1, 1)
    assert (await r.pass_once(KEEP, RUN_TTL_MS)).segment is None
