"""History growth: does what a person looks at get slower as finished history piles up?

Two stores, each a Valkey of its own with the embedded server's encoding settings: the
reference holds the smallest size of history and never grows; the other grows through
--sizes (1,000 -> 10,000 -> 100,000 by default). History is written through the real
stores, one unit at a time: a run started, its call filed and withdrawn, its question
asked and answered, the run finished. Beside the history both stores hold the same
live set, which never grows: LIVE runs still going (one started before any history,
with calls and questions of its own) and PENDING calls waiting for a person.

At each size the reads and writes below are timed on both stores, alternating, so
both see the same machine load; each line prints p50/p99 of the grown store, and the
ratio of the largest size to the smallest (the reference, same moments) is judged
PASS at <= 1.3, else MISS:

  runs (App Home)   the App Home's run read: the opener's live runs, the newest live
                    runs, and each one's thread link (bot/slack/listeners/commands.py my_runs,
                    without the Slack look-ups of who may steer)
  /hitl pending     the requests waiting for a person (`list_pending`)
  show RUN          `hitl-bot show RUN`'s read of the oldest live run (run_view)
  create            a call filed for review (`RequestStore.create`)
  decision          an approve of that call (the store's transition a click makes;
                    bench/click_latency.py times the whole click through Slack)
  sweeper pass      one pass of the real Sweeper (nothing due)
  card draw         a waiting call read and its approval card drawn (what the
                    notifier does for each card; no Slack)

Then retention (bot/store/retire.py) runs on both stores with its clock past
HITL_RETENTION, and the live store's memory after it is judged the same way: every
finished unit left for the archive, so the grown store should hold what the reference
holds (the live set).

Prints figures; not a test. Starts its own Valkeys (REDIS_URL is not used).

    .venv/bin/python bench/history.py [--sizes 1000,10000,100000] [--samples 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory

from _common import REFUND, embedded_memory, fan_out, print_load, server_url, used_memory, verdict
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from redis.asyncio import Redis

from bot.cli.runs import run_view
from bot.clock import wall_ms
from bot.config import Settings
from bot.core.models import Decision, RunState
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.deadlines.sweeper import Sweeper
from bot.gate.runtime import Runtime
from bot.signing import Signer
from bot.slack.blocks.render import approval_message
from bot.slack.listeners.commands import HOME_RUNS_LOOKED
from bot.store import keys
from bot.store.retire import Retention
from bot.store.run.runs import RUN_TTL_S
from bot.store.stream.events_trim import EventTrimmer

TIERS = ("low", "medium", "high", "critical")
LEVEL = {"review_timeout": "1h", "reviewers": {"channels": ["#hitl-approvals"]}}
# One level, anyone may approve, one approval: a decision closes review; nothing is due
# within the bench, so the sweeper's passes find nothing to fire.
POLICY = parse_policy(
    {"tiers": {t: {**LEVEL, "approvers": ["*"], "approvals_required": 1} for t in TIERS}}
)
LIVE = 20  # live runs beside the history, on both stores
PENDING = 20  # calls waiting for a person, on both stores
PEOPLE = 50  # who start the history's runs
HOME_USER = "U0HOME"  # opens the App Home; started the live runs
TARGET = 1.3
HOUR_MS = 3_600_000
Op = Callable[[], Awaitable[object]]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


@dataclass
class Store:
    name: str
    rt: Runtime
    redis: Redis
    size: int = 0
    oldest_run: str = ""
    waiting: str = ""
    times: dict[str, list[float]] = field(default_factory=dict)

    async def live_set(self) -> None:
        """The live runs and pending calls, written before any history."""
        for i in range(LIVE):
            run = await self.rt.runs.start(agent="claw", prompt=f"live {i}", requester=HOME_USER)
            await self.rt.runs.update(run.id, state=RunState.RUNNING)
            if i == 0:
                self.oldest_run = run.id
                for k in range(3):
                    await self.file(run.id, k)
                for k in range(2):
                    await self.rt.questions.ask(f"Which {k}?", timeout_ms=HOUR_MS, run_id=run.id)
        for i in range(PENDING):
            self.waiting = await self.file(None, i)

    async def file(self, run_id: str | None, i: int) -> str:
        made = await self.rt.requests.create(
            POLICY, tool="refund", args=REFUND | {"n": i}, requester="U0AGENT", run_id=run_id
        )
        return made.request.id

    async def unit(self, i: int) -> None:
        """One unit of finished history: a run, its call and its question, all over."""
        rt = self.rt
        run = await rt.runs.start(agent="claw", prompt=f"old {i}", requester=f"U{i % PEOPLE:03d}")
        await rt.runs.update(run.id, state=RunState.RUNNING)
        rid = await self.file(run.id, i)
        await rt.requests.transition(rid, Decision(event=Event.CANCEL, actor="U0OPS"))
        q = await rt.questions.ask("Ship it?", timeout_ms=HOUR_MS, run_id=run.id)
        await rt.questions.answer(q.id, actor=f"U{i % PEOPLE:03d}", answer="yes")
        await rt.runs.update(run.id, state=RunState.FINISHED)

    async def grow(self, to: int, workers: int) -> float:
        n = to - self.size
        base = self.size

        async def one(_w: int, i: int) -> None:
            await self.unit(base + i)

        took = await fan_out(workers, n, one)
        self.size = to
        return took

    # -- what is timed ----------------------------------------------------------------

    async def home_runs(self) -> object:
        mine = await self.rt.runs.started_by(HOME_USER, HOME_RUNS_LOOKED)
        everyone = await self.rt.runs.list(HOME_RUNS_LOOKED, live=True)
        shown = {r.id: r for r in [*mine, *everyone]}
        return [await self.rt.cards.thread_link(run_id) for run_id in shown]

    async def pending(self) -> object:
        return await self.rt.requests.list_pending()

    async def show_run(self) -> object:
        return await run_view(self.rt, self.oldest_run)

    async def create_and_decide(self) -> tuple[float, float]:
        t0 = time.perf_counter()
        made = await self.rt.requests.create(
            POLICY, tool="refund", args=REFUND, requester="U0AGENT"
        )
        t1 = time.perf_counter()
        req = made.request
        await self.rt.requests.transition(
            req.id, Decision(event=Event.APPROVE, actor="UALICE", payload_hash=req.payload_hash)
        )
        t2 = time.perf_counter()
        # not timed: it never runs, so it leaves the approved calls
        await self.rt.requests.transition(req.id, Decision(event=Event.CANCEL, actor="U0OPS"))
        return t1 - t0, t2 - t1

    async def card_draw(self) -> object:
        req = await self.rt.requests.get(self.waiting)
        return approval_message(req, now_ms=wall_ms())

    async def retire(self, archive: Path) -> tuple[int, float]:
        """Everything finished, out to the archive, as serve's pass would once the
        retention period has passed; (units retired, seconds)."""
        assert self.rt.signer is not None
        later = wall_ms() + 2 * KEEP_MS
        r = Retention(
            self.redis, self.rt.signer, archive, self.rt.signer.public().verify, lambda: later
        )
        t0, n = time.perf_counter(), 0
        while True:
            got = await r.pass_once(KEEP_MS, RUN_TTL_S * 1000)
            if got.segment is None:
                break
            n += got.runs
        took = time.perf_counter() - t0
        # As serve's own consumers would have by now: every event read, then trimmed
        # (bot/store/stream/events_trim.py), so the streams hold no history either.
        for shard in range(keys.SHARDS):
            await self.redis.xgroup_create(keys.events(shard), "bench", id="$", mkstream=True)
        trimmer = EventTrimmer(self.redis, ("bench",))
        while (await trimmer.trim_once()).trimmed:  # serve's trims every 5 s, a chunk each
            pass
        # and each run taken off the run queue, as a worker does (bot/store/run/run_queue.py)
        await self.redis.xtrim(keys.RUN_QUEUE, maxlen=0, approximate=False)
        return n, took

    async def sweep(self) -> object:
        return await Sweeper(self.rt.requests, self.rt.questions, clock=wall_ms).sweep_once()

    async def sample(self) -> None:
        """One of each timed step, in milliseconds."""
        for name, op in (
            ("runs (App Home)", self.home_runs),
            ("/hitl pending", self.pending),
            ("show RUN", self.show_run),
            ("sweeper pass", self.sweep),
            ("card draw", self.card_draw),
        ):
            t0 = time.perf_counter()
            await op()
            self.times.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
        create, decide = await self.create_and_decide()
        self.times.setdefault("create", []).append(create * 1000)
        self.times.setdefault("decision", []).append(decide * 1000)


NAMES = (
    "runs (App Home)",
    "/hitl pending",
    "show RUN",
    "card draw",
    "create",
    "decision",
    "sweeper pass",
)
KEEP_MS = 90 * 86_400_000


async def measure(stores: list[Store], samples: int) -> None:
    for s in stores:
        s.times = {}
    for i in range(samples):
        for s in stores if i % 2 == 0 else stores[::-1]:  # neither always goes first
            await s.sample()


async def open_store(name: str, url: str) -> Store:
    redis = Redis.from_url(url, decode_responses=True, socket_timeout=None)
    await embedded_memory(redis)
    # serve's key: decisions are sealed as serve seals them, so retention lets them go
    signer = Signer(Ed25519PrivateKey.generate())
    rt = Runtime(settings=Settings(), redis=redis, server=None, policy=POLICY, signer=signer)
    store = Store(name, rt, redis)
    await store.live_set()
    return store


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000", help="history sizes, ascending")
    ap.add_argument("--samples", type=int, default=200, help="timed samples per step and size")
    ap.add_argument("--workers", type=int, default=8, help="concurrent history writers")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    print_load()
    with ExitStack() as stack:
        ref = await open_store("reference", stack.enter_context(server_url(fresh=True)))
        big = await open_store("grown", stack.enter_context(server_url(fresh=True)))
        took = await ref.grow(sizes[0], a.workers)
        print(f"reference: {sizes[0]:,} units of history written in {took:.1f} s (not timed)")
        first: dict[str, tuple[float, float]] = {}
        rows: list[tuple[int, dict[str, tuple[float, float]], int]] = []
        for size in sizes:
            before = big.size
            took = await big.grow(size, a.workers)
            rate = (size - before) / max(took, 1e-9)
            print(f"grown to {size:,} units of history in {took:.1f} s ({rate:,.0f}/s, not timed)")
            await measure([ref, big], a.samples)
            got = {n: (pct(big.times[n], 50), pct(big.times[n], 99)) for n in NAMES}
            base = {n: (pct(ref.times[n], 50), pct(ref.times[n], 99)) for n in NAMES}
            first = first or got
            rows.append((size, got, await used_memory(big.redis)))
            last_ref = base
        print()
        head = "".join(f"{f'{s:,}':>18}" for s, _, _ in rows)
        print(f"{'ms, p50 / p99':<18}{head}{'ref now':>18}")
        for n in NAMES:
            cells = "".join(f"{f'{g[n][0]:.2f} / {g[n][1]:.2f}':>18}" for _, g, _ in rows)
            r50, r99 = last_ref[n]
            print(f"{n:<18}{cells}{f'{r50:.2f} / {r99:.2f}':>18}")
        mem = "".join(f"{f'{m / 2**20:.1f} MiB':>18}" for _, _, m in rows)
        print(f"{'used_memory':<18}{mem}{f'{await used_memory(ref.redis) / 2**20:.1f} MiB':>18}")
        print()
        largest = rows[-1][1]
        print(f"largest ({sizes[-1]:,}) against the reference ({sizes[0]:,}), same moments:")
        for n in NAMES:
            for i, p in ((0, "p50"), (1, "p99")):
                ratio = largest[n][i] / last_ref[n][i]
                ok = ratio <= TARGET
                print("  " + verdict(f"{n} {p} ratio", ratio, f"<= {TARGET}", ok, ".2f"))
        m0, m1 = await used_memory(ref.redis), rows[-1][2]
        print(f"  live store memory before retention: {m1 / m0:.1f}x")
        print()
        for s in (ref, big):
            n, took = await s.retire(Path(stack.enter_context(TemporaryDirectory())))
            print(f"retention: {s.name} moved {n:,} runs to the archive in {took:.1f} s")
        m0, m1 = await used_memory(ref.redis), await used_memory(big.redis)
        print(f"{'used_memory':<18}{f'{m1 / 2**20:.1f} MiB':>18}{f'{m0 / 2**20:.1f} MiB':>18}")
        ok = m1 / m0 <= TARGET
        print("  " + verdict("memory after retention ratio", m1 / m0, f"<= {TARGET}", ok, ".2f"))
        for s in (ref, big):
            await s.redis.aclose()


if __name__ == "__main__":
    asyncio.run(main())
