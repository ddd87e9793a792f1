"""Sweeper lateness: how long after its deadline does a timeout fire, under load?

Creates --n pending requests whose deadlines are spread evenly over --window seconds,
then runs the real Sweeper (interval 0.05 s) and records, for every fired timeout,
fire time - expires_at. Prints figures; not a test. Starts its own Valkey unless
REDIS_URL is set (that database is FLUSHED).

Creation takes as long as it takes, so the deadlines are laid out on a clock
`base` ms, and the sweeper runs on the wall clock shifted so that `base` is the
moment sweeping starts: wall_ms() - shift, a real clock that ticks in real time.

    .venv/bin/python bench/sweeper_lateness.py [--n 100000] [--window 30] [--workers 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from _common import REFUND, print_load, server_cpu, server_url, verdict
from redis.asyncio import ConnectionPool, Redis

from bot.clock import new_id, wall_ms
from bot.core.policy import parse_policy
from bot.core.proposal import propose
from bot.core.states import Event, State
from bot.deadlines.sweeper import Sweeper, SweepStats
from bot.store import keys
from bot.store.codec import to_hash
from bot.store.questions import QuestionStore
from bot.store.requests import Moved, RequestStore
from bot.store.scripts import CREATE

TIMEOUT = 60_000
BATCH = 500
WHO = "U0REQUEST"
RECORDS = json.dumps([[Event.CREATE.value, "", State.PENDING_REVIEW.value, ""]])
# One level, no escalation: every timeout is one transition to auto_rejected.
POLICY = parse_policy(
    {
        "tiers": {
            t: {"review_timeout": f"{TIMEOUT}ms", "reviewers": {"channels": ["#approvals"]}}
            for t in ("low", "medium", "high", "critical")
        }
    }
)


class TimedSweeper(Sweeper):
    """The real Sweeper, recording how long each pass takes and how much it fires."""

    passes: list[tuple[float, int]]

    async def sweep_once(self) -> SweepStats:
        t0 = time.perf_counter()
        stats = await super().sweep_once()
        self.passes.append((time.perf_counter() - t0, stats.fired))
        return stats


def pct(xs: list[float], p: float) -> float:
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def create_args(rid: str, now: int) -> tuple[list[str], list[str | int], int]:
    """KEYS and ARGV of the CREATE that RequestStore.create sends, and the expires_at."""
    req, _ = propose(POLICY, request_id=rid, tool="refund", args=REFUND, requester=WHO, now=now)
    assert req.expires_at is not None
    return keys.request_keys(rid), [now, WHO, RECORDS, json.dumps(to_hash(req))], req.expires_at


async def same_as_store(r: Redis, sha: str) -> None:
    """Sanity: the pipelined path writes exactly what RequestStore.create writes."""
    now = wall_ms()
    ks, argv, _ = create_args("benchA", now)
    await r.evalsha(sha, len(ks), *ks, *argv)
    store = RequestStore(r, clock=lambda: now, ids=lambda: "benchB")
    await store.create(POLICY, tool="refund", args=REFUND, requester=WHO)
    a, b = await r.hgetall(keys.request("benchA")), await r.hgetall(keys.request("benchB"))
    assert a | {"id": "benchB"} == b, "bench/sweeper_lateness.py is out of date with create"
    await r.flushdb()


async def create(url: str, n: int, window_ms: int, workers: int, base: int) -> dict[str, int]:
    """n requests whose expires_at = base + i * window / n; returns id -> expires_at.

    Through the store's own CREATE script, pipelined in batches with CLIENT REPLY OFF:
    redis-py's pure-Python RESP parser would spend ~300 us on each ~70-element reply.
    """
    pool = ConnectionPool.from_url(url, decode_responses=True)
    r = Redis(connection_pool=pool)
    sha = await r.script_load(CREATE)
    await same_as_store(r, sha)
    expires: dict[str, int] = {}

    async def worker(w: int) -> None:
        conn = await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            for start in range(w * BATCH, n, workers * BATCH):
                cmds: list[tuple[object, ...]] = [("CLIENT", "REPLY", "OFF")]
                for i in range(start, min(n, start + BATCH)):
                    rid = new_id()
                    ks, argv, expires[rid] = create_args(rid, base + i * window_ms // n - TIMEOUT)
                    cmds.append(("EVALSHA", sha, len(ks), *ks, *argv))
                cmds.append(("CLIENT", "REPLY", "ON"))
                await conn.send_packed_command(conn.pack_commands(cmds))
                assert await conn.read_response() == "OK"
        finally:
            await pool.release(conn)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(workers)))
    took = time.perf_counter() - t0
    armed = sum([await r.zcard(keys.due(s)) for s in range(keys.SHARDS)])
    assert armed == n, f"{armed} timers armed for {n} requests"
    print(f"created {n:,} requests in {took:.1f} s ({n / took:,.0f}/s, not timed)")
    await r.aclose()
    return expires


async def sweep(url: str, expires: dict[str, int], window_s: float, base: int) -> None:
    r = Redis.from_url(url, decode_responses=True)
    fired_at: list[tuple[int, float]] = []  # (expires_at, lateness ms)
    done = asyncio.Event()
    shift = wall_ms() - base

    def clock() -> int:
        return wall_ms() - shift

    async def on_fired(m: Moved) -> None:
        exp = expires[m.request.id]
        fired_at.append((exp, time.time_ns() / 1e6 - shift - exp))
        if len(fired_at) == len(expires):
            done.set()

    sweeper = TimedSweeper(
        RequestStore(r, clock=clock), QuestionStore(r, clock=clock), clock=clock, on_fired=on_fired
    )
    sweeper.passes = []
    stop = asyncio.Event()
    c0, p0, t0 = await server_cpu(r), time.process_time(), time.perf_counter()
    task = asyncio.create_task(sweeper.run(stop, interval_s=0.05))
    try:
        await asyncio.wait_for(done.wait(), window_s + 120)
    except TimeoutError:
        print(f"gave up waiting: {len(fired_at):,} of {len(expires):,} fired")
    stop.set()
    await task
    took, cpu, srv = time.perf_counter() - t0, time.process_time() - p0, await server_cpu(r) - c0
    await r.aclose()
    if fired_at:
        report(fired_at, window_s, took, cpu, srv, sweeper.passes)


def report(
    fired_at: list[tuple[int, float]],
    window_s: float,
    took: float,
    cpu: float,
    srv: float,
    passes: list[tuple[float, int]],
) -> None:
    n = len(fired_at)
    first = min(e for e, _ in fired_at)
    slices = 6
    step = window_s * 1000 / slices
    print(f"\nlateness (fire time - expires_at) by when the deadline fell, {n:,} fired")
    print(f"  {'deadline at':<14}{'fired':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for k in range(slices):
        part = sorted(lt for e, lt in fired_at if k * step <= e - first < (k + 1) * step)
        span = f"{k * step / 1000:.1f}-{(k + 1) * step / 1000:.1f} s"
        row = f"{len(part):>8,}{pct(part, 50):>10.0f}{pct(part, 99):>10.0f}"
        print(f"  {span:<14}{row}{(part[-1] if part else float('nan')):>10.0f}")
    late = sorted(lt for _, lt in fired_at)
    print(f"  {'all':<14}{n:>8,}{pct(late, 50):>10.0f}{pct(late, 99):>10.0f}{late[-1]:>10.0f}")
    print(f"  mean lateness {statistics.fmean(late):.0f} ms")
    print(f"\n  deadlines span {window_s:.0f} s = {n / window_s:,.0f} timeouts/s to fire")
    print(f"  sweeping took {took:.1f} s = {n / took:,.0f} fired/s (capacity, if it fell behind)")
    busy = sorted(d * 1000 for d, f in passes if f) or [0.0]
    per = statistics.fmean(f for _, f in passes if f) if len(busy) > 1 else 0.0
    print(
        f"  {len(passes)} passes, {len(busy)} fired ({per:.0f} each on average); "
        f"a pass took p50 {pct(busy, 50):.0f} ms, max {busy[-1]:.0f} ms, +50 ms sleep"
    )
    print(f"  sweeper process CPU  {cpu:.1f} s = {cpu / n * 1e6:.0f} us per fired timeout")
    print(f"  Valkey server CPU    {srv:.1f} s = {srv / n * 1e6:.0f} us per fired timeout")
    p99 = pct(late, 99) / 1000
    print()
    print(verdict("sweeper p99 lateness, seconds", p99, "< 1", p99 < 1, ".2f"))


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000, help="pending requests")
    ap.add_argument("--window", type=float, default=30.0, help="seconds the deadlines span")
    ap.add_argument("--workers", type=int, default=4, help="concurrent pipelined creators")
    a = ap.parse_args()
    base = wall_ms()
    print_load()
    with server_url() as url:
        r = Redis.from_url(url, decode_responses=True)
        await r.flushdb()
        await r.aclose()
        expires = await create(url, a.n, int(a.window * 1000), a.workers, base)
        await sweep(url, expires, a.window, base)


if __name__ == "__main__":
    asyncio.run(main())
