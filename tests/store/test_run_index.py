"""Runs are listed through the run indexes, never a SCAN: the indexes agree with the run
records after starts, finishes, stops and expiry, on one Redis and on a cluster
(HITL_TEST_CLUSTER=1), and a listing reads about as many runs as it shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster

from bot.clock import FakeClock
from bot.core.models import RUN_FINAL, Decision, Run, RunState
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.gate.corrections import stop_run
from bot.store import keys
from bot.store.retire import Retention
from bot.store.run.runs import RUN_TTL_S
from bot.store.stores import StoreSet
from tests.cli.test_cli import cli
from tests.conftest import QUORUM_POLICY
from tests.store.test_run_questions import _scans
from tests.support.children import kill_9_when_written
from tests.support.clients import CLUSTER
from tests.support.keys import serve_signer


async def _calls(redis: Redis, command: str) -> int:
    """How many times the store has served `command`, summed over a cluster's nodes."""
    if isinstance(redis, RedisCluster):
        per_node = [
            await redis.info("commandstats", target_nodes=node) for node in redis.get_nodes()
        ]
    else:
        per_node = [await redis.info("commandstats")]
    stats = [cast(dict[str, Any], i).get(f"cmdstat_{command}", {}) for i in per_node]
    return sum(int(s.get("calls", 0)) for s in stats)


async def _index(redis: Redis, key: str) -> list[str]:
    return cast(list[str], await redis.zrevrange(key, 0, -1))


async def _agree(store: StoreSet, redis: Redis) -> None:
    """Every index names exactly the runs whose records say they belong there."""
    every = await _index(redis, keys.RUNS_ALL)
    records = [await store.runs.get(run_id) for run_id in every]
    assert [r.id for r in records] == [r.id for r in await store.runs.list(1_000)]
    live = [r for r in records if r.state not in RUN_FINAL]
    assert await _index(redis, keys.RUNS_LIVE) == [r.id for r in live]
    for who in {r.requester for r in records}:
        mine = [r.id for r in live if r.requester == who]
        assert await _index(redis, keys.runs_live_by(who)) == mine


async def test_the_indexes_agree_with_the_records_after_starts_finishes_stops_and_expiry(
    redis: Redis, clock: FakeClock
) -> None:
    store = StoreSet(redis, clock=clock)
    started: list[Run] = []
    for i in range(6):
        clock.advance(1_000)
        started.append(await store.runs.start(agent="claw", prompt=f"p{i}", requester=f"U{i % 2}"))
    await _agree(store, redis)

    done, failed, stopped, expired, running, queued = started
    await store.runs.update(done.id, state=RunState.RUNNING)
    await store.runs.update(done.id, state=RunState.FINISHED)
    await store.runs.update(failed.id, state=RunState.FAILED, error="boom")
    await stop_run(
        store.runs, store.requests, store.questions, store.steering, stopped.id, actor="U0"
    )
    await store.runs.update(running.id, state=RunState.RUNNING)
    await redis.delete(keys.run(expired.id))  # its 30 days ran out
    await store.cards.set_thread_link(expired.id, "https://example.slack.com/p1")  # late write

    listed = await store.runs.list(10)
    assert [r.id for r in listed] == [queued.id, running.id, stopped.id, failed.id, done.id]
    assert [r.id for r in await store.runs.list(10, live=True)] == [queued.id, running.id]
    assert [r.id for r in await store.runs.started_by("U1", 10)] == [queued.id]
    assert [r.id for r in await store.runs.started_by("U0", 10)] == [running.id]
    # the expired run's entry was pruned as the listing met it, and a final run's from
    # the live indexes
    await _agree(store, redis)
    assert expired.id not in await _index(redis, keys.RUNS_ALL)
    assert await store.runs.counts() == (5, 2)


async def test_the_indexes_agree_with_the_records_after_retention(
    redis: Redis, clock: FakeClock, tmp_path: Path
) -> None:
    """Retention moves finished runs (and the requests filed under them) out: every index
    then names exactly what the store still holds."""
    store = StoreSet(redis, clock=clock, signer=serve_signer())
    policy = parse_policy(QUORUM_POLICY)
    old = [await store.runs.start(agent="claw", prompt=f"p{i}", requester="U1") for i in range(3)]
    for run in old[:2]:
        made = await store.requests.create(
            policy, tool="refund", args={"amount": 1}, requester="U1", run_id=run.id
        )
        await store.requests.transition(made.request.id, Decision(event=Event.CANCEL, actor="U0"))
        await store.runs.update(run.id, state=RunState.FINISHED)
    clock.advance(100 * 86_400_000)
    young = await store.runs.start(agent="claw", prompt="new", requester="U1")
    signer = serve_signer()
    got = await Retention(redis, signer, tmp_path, signer.public().verify, clock).pass_once(
        90 * 86_400_000, RUN_TTL_S * 1000
    )
    assert (got.runs, got.requests) == (2, 2)
    await _agree(store, redis)
    assert [r.id for r in await store.runs.list(10)] == [young.id, old[2].id]
    assert await store.requests.ids_between() == []
    for run in old[:2]:
        assert await redis.zcard(keys.run_requests(run.id)) == 0


async def test_an_outside_agents_run_is_listed_from_its_first_call(redis: Redis) -> None:
    store = StoreSet(redis)
    assert await store.owners.claim("triage-88", "billing-bot", title="Ticket 88") == "billing-bot"
    assert await store.owners.claim("triage-88", "billing-bot") == "billing-bot"  # reused
    assert await store.owners.claim("triage-88", "intruder") == "billing-bot"
    listed = await store.runs.list(10, live=True)
    assert [(r.id, r.outside, r.prompt) for r in listed] == [("triage-88", True, "Ticket 88")]
    assert [r.id for r in await store.runs.started_by("billing-bot", 10)] == ["triage-88"]
    await _agree(store, redis)


async def test_a_crash_between_the_record_and_its_index_leaves_no_trusted_entry(
    redis: Redis, clock: FakeClock
) -> None:
    """A run that turned final while its live entries stayed (a crash before the index
    step) is left out of the live list and pruned; so is an entry naming no record."""
    store = StoreSet(redis, clock=clock)
    run = await store.runs.start(agent="claw", prompt="one", requester="U1")
    await redis.hset(keys.run(run.id), "state", RunState.FINISHED.value)  # the index not told
    await redis.zadd(keys.RUNS_LIVE, {"run-never-written": 1})
    assert await store.runs.list(10, live=True) == []
    assert await store.runs.started_by("U1", 10) == []
    assert await _index(redis, keys.RUNS_LIVE) == []
    assert await _index(redis, keys.runs_live_by("U1")) == []
    assert [r.id for r in await store.runs.list(10)] == [run.id]


async def test_listing_sends_no_scan_and_reads_about_as_many_runs_as_it_shows(
    redis: Redis, clock: FakeClock
) -> None:
    store = StoreSet(redis, clock=clock)
    runs = []
    for i in range(120):
        clock.advance(1)
        runs.append(await store.runs.start(agent="claw", prompt=f"p{i}", requester="U1"))
    for run in runs[:100]:  # most of history is finished
        await store.runs.update(run.id, state=RunState.FINISHED)

    scans, reads = await _scans(redis), await _calls(redis, "hgetall")
    newest = await store.runs.list(5)
    live = await store.runs.list(5, live=True)
    mine = await store.runs.started_by("U1", 5)
    assert await _scans(redis) == scans
    assert await _calls(redis, "hgetall") - reads == 15  # the runs shown, and no others
    assert [r.id for r in newest] == [r.id for r in reversed(runs[-5:])]
    assert [r.id for r in live] == [r.id for r in newest] == [r.id for r in mine]


async def test_starts_tidy_the_oldest_expired_entries(redis: Redis, clock: FakeClock) -> None:
    """Runs expire oldest first: each start prunes the oldest entries whose record has
    gone, so the indexes do not grow with runs nobody lists any more."""
    store = StoreSet(redis, clock=clock)
    old = [await store.runs.start(agent="claw", prompt="old", requester="U1") for _ in range(4)]
    for run in old:
        await redis.delete(keys.run(run.id))
    for _ in range(2):
        clock.advance(1)
        await store.runs.start(agent="claw", prompt="new", requester="U1")
    assert len(await _index(redis, keys.RUNS_ALL)) == 2
    assert len(await _index(redis, keys.RUNS_LIVE)) == 2
    assert len(await _index(redis, keys.runs_live_by("U1"))) == 2


async def test_hitl_bot_runs_reads_the_index_and_maintenance_rebuilds_it(
    redis: Redis, redis_url: str
) -> None:
    store = StoreSet(redis)
    first = await store.runs.start(agent="claw", prompt="one", requester="U1")
    second = await store.runs.start(agent="claw", prompt="two", requester="U2")
    await store.runs.update(second.id, state=RunState.FINISHED)
    gone = await store.runs.start(agent="claw", prompt="three", requester="U1")
    # as a store from before the indexes left it, with an entry the store lost since
    for key in (keys.RUNS_ALL, keys.RUNS_LIVE, keys.runs_live_by("U1")):
        await redis.delete(key)
    await redis.zadd(keys.RUNS_ALL, {gone.id: 1})
    await redis.zadd(keys.runs_live_by("U1"), {gone.id: 1})
    await redis.delete(keys.run(gone.id))
    assert await store.runs.list(10, live=True) == []

    code, out, err = await cli("maintenance", "index-runs", redis_url=redis_url)
    assert code == 0, err
    assert "Checked 2 runs" in out
    await _agree(store, redis)
    assert await _index(redis, keys.runs_live_by("U1")) == [first.id]

    scans = await _scans(redis)
    code, out, err = await cli("runs", "--json", redis_url=redis_url)
    assert code == 0, err
    assert await _scans(redis) == scans
    assert {r["id"] for r in json.loads(out)} == {first.id, second.id}


CHILD = "tests.store.run_index_child"


def _child_args(redis_url: str, mode: str, marker: Path) -> list[str]:
    return [redis_url, mode, str(marker), *(["cluster"] if CLUSTER else [])]


async def test_kill_9_between_a_runs_record_and_its_index(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    """A process killed after a run's record and before its index step: the lists never
    name a run the store lacks, and `maintenance index-runs` brings the run in."""
    marker = tmp_path / "written"
    args = _child_args(redis_url, "start", marker)
    await kill_9_when_written(marker, CHILD, *args, timeout_s=20)
    lost = marker.read_text()
    store = StoreSet(redis)
    assert (await store.runs.get(lost)).state == RunState.QUEUED  # its record is there
    listed = [r.id for r in await store.runs.list(10)]
    assert len(listed) == 2 and lost not in listed

    code, _, err = await cli("maintenance", "index-runs", redis_url=redis_url)
    assert code == 0, err
    assert lost in [r.id for r in await store.runs.list(10, live=True)]
    assert lost in [r.id for r in await store.runs.started_by("U1", 10)]
    await _agree(store, redis)


async def test_kill_9_between_a_runs_finish_and_its_index(
    redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    """Killed after a run's record says finished and before the live indexes are told:
    the live lists leave the run out (and prune it), the list of every run keeps it."""
    marker = tmp_path / "written"
    args = _child_args(redis_url, "finish", marker)
    await kill_9_when_written(marker, CHILD, *args, timeout_s=20)
    done = marker.read_text()
    store = StoreSet(redis)
    assert (await store.runs.get(done)).state == RunState.FINISHED
    assert done in await _index(redis, keys.RUNS_LIVE)  # what the crash left
    assert done not in [r.id for r in await store.runs.list(10, live=True)]
    assert done not in [r.id for r in await store.runs.started_by("U1", 10)]
    assert done in [r.id for r in await store.runs.list(10)]
    await _agree(store, redis)
