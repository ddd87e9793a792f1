"""Sweeper lateness: how long after its deadline does a timeout fire, under load?

Creates --pending requests whose deadlines are spread evenly over --window seconds
(the shared pipelined filler, bench/_common.py), prints Redis used_memory per
pending request at that size, then runs the real Sweeper (interval 0.05 s) and
records, for every fired timeout, fire time - expires_at. Prints figures; not a
test. Starts its own Valkey unless REDIS_URL is set (that database is FLUSHED).

Creation takes as long as it takes, so the deadlines are laid out on a clock
`base` ms, and the sweeper runs on the wall clock shifted so that `base` is the
moment sweeping starts: wall_ms() - shift, a real clock that ticks in real time.

    .venv/bin/python bench/sweeper_lateness.py [--pending 100000] [--window 30] [--workers 4]

Issue 13's scale figure: --pending 1000000 --window 600 (1,667 deadlines a second).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _common import (
    Filler,
    embedded_memory,
    flush,
    print_load,
    server_cpu,
    server_url,
    used_memory,
    verdict,
)
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.core.policy import parse_policy
from bot.deadlines.sweeper import Sweeper, SweepStats
from bot.store import keys
from bot.store.requests import Moved, RequestStore
from bot.store.run.questions import QuestionStore

TIMEOUT = 60_000
# One level, no escalation: every timeout is one transition to auto_rejected.
POLICY = parse_policy(
    {
        "tiers": {
            t: {
                "review_timeout": f"{TIMEOUT}ms",
                "reviewers": {"channels": ["#approvals"]},
                "approvers": ["*"],
            }
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


async def create(url: str, n: int, window_ms: int, workers: int, base: int) -> dict[str, int]:
    """n requests whose expires_at = base + i * window / n, and used_memory per request."""
    r = Redis.from_url(url, decode_responses=True)
    await flush(r)
    await embedded_memory(r)
    empty = await used_memory(r)
    filler = Filler(POLICY)
    expires = await filler.fill(url, n, lambda i: base + i * window_ms // n - TIMEOUT, workers)
    armed = sum([await r.zcard(keys.due(s)) for s in range(keys.SHARDS)])
    assert armed == n, f"{armed} timers armed for {n} requests"
    full = await used_memory(r)
    print(
        f"used_memory {full / 2**20:,.0f} MiB with {n:,} pending, {empty / 2**20:,.1f} MiB empty: "
        f"{(full - empty) / n:,.0f} B per pending request (the embedded Valkey's encodings)"
    )
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
    ap.add_argument(
        "--pending", "--n", dest="n", type=int, default=100_000, help="pending requests"
    )
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
        print(f"deadlines spread over {a.window:.0f} s: {a.n / a.window:,.0f} a second to fire")
        await sweep(url, expires, a.window, base)


if __name__ == "__main__":
    asyncio.run(main())
