"""Click-to-decision with 1,000 long-polls and 1,000 SDK waiters held, against none.

Runs the real bot in this process (`run_serve`, default HITL_REDIS_MAX_CONNECTIONS)
against the Slack emulator. Two phases in the same run:

  baseline  nothing else waits;
  held      --polls long-polls (`GET /v1/approvals/{id}?wait=60`, re-polled when
            they end) held by a SUBPROCESS, and --sdk direct-mode SDK waits
            (`DirectBackend.wait`, its own pool and hub) in this process.

In each phase, while a background loop creates a request (POST /v1/approvals) and
probes /healthz every 100 ms, --n signed Approve clicks are POSTed to /slack/events
one at a time; each is timed from just before the POST until its waiter (an SDK
wait or a long-poll, alternating, started and seen held before the click) returns
`approved`. Prints p50/p99 per phase, the /healthz and create status counts, how
many log records said "Too many connections", and a PASS/MISS line for p99 < 100 ms
with waiters held. Prints figures; not a test. Starts its own Valkey unless
REDIS_URL is set (FLUSHED).

    .venv/bin/python bench/waiters.py [--n 200] [--polls 1000] [--sdk 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import yaml
from _common import REFUND, print_load, server_url, verdict
from click_latency import API_TOKEN, POLICY, SECRET, TOKEN, Row, pct, posted, signed_click
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.config import Settings
from bot.core.policy import parse_policy
from bot.db.hub import hub_for
from bot.sandbox.slack import SlackEmulator
from bot.sdk.direct import DirectBackend
from bot.server.serve import run_serve
from bot.store.requests import RequestStore

AUTH = {"Authorization": f"Bearer {API_TOKEN}"}
KINDS = ("SDK wait", "HTTP long-poll")
HELD_ON = 200  # requests the held waiters wait on (never decided while measuring)


class Counted(logging.Handler):
    """Counts log records that say the pool ran dry."""

    def __init__(self) -> None:
        super().__init__()
        self.dry = 0

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage() + (str(record.exc_info[1]) if record.exc_info else "")
        self.dry += "Too many connections" in text


METRICS_FAILED: Counter[str] = Counter()  # /metrics answers without the gauge, by status


async def served_waiters(http: httpx.AsyncClient) -> int:
    """The bot's `hitl_waiters` gauge; -1 when /metrics did not answer with it."""
    got = await http.get("/metrics")
    for ln in got.text.splitlines():
        if ln.startswith("hitl_waiters "):
            return int(ln.split()[1])
    METRICS_FAILED[f"{got.status_code} {got.text[:120]}"] += 1
    return -1


class Phase:
    def __init__(self, name: str) -> None:
        self.name = name
        self.lat: dict[str, list[float]] = {k: [] for k in KINDS}
        self.health: Counter[int] = Counter()
        self.creates: Counter[int] = Counter()


class Bench:
    def __init__(self, bot: str, team: str, sdk: DirectBackend) -> None:
        self.http = httpx.AsyncClient(base_url=bot, headers=AUTH, timeout=30)
        self.slack = httpx.AsyncClient(base_url=bot, timeout=30)
        self.team = team
        self.sdk = sdk
        self.sdk_hub = hub_for(sdk.rt.redis)

    async def background(self, phase: Phase, stop: asyncio.Event) -> None:
        """A create and a /healthz probe every 100 ms, as an ordinary day's traffic."""
        n = 0
        while not stop.is_set():
            n += 1
            got = await self.http.get("/healthz")
            phase.health[got.status_code] += 1
            body = {"tool": "refund", "args": {**REFUND, "bg": n}}
            made = await self.http.post("/v1/approvals", json=body)
            phase.creates[made.status_code] += 1
            await asyncio.sleep(0.1)

    async def waiter(self, kind: str, rid: str) -> tuple[float, str]:
        if kind == KINDS[0]:
            state = (await self.sdk.wait(rid, 30)).state.value
        else:
            got = await self.http.get(f"/v1/approvals/{rid}", params={"wait": 30})
            state = got.json()["state"]
        return time.perf_counter(), state

    async def held(self, kind: str, before: int) -> None:
        """Until the new waiter is registered (the hub counts it)."""
        give_up = time.monotonic() + 10
        while time.monotonic() < give_up:
            now = self.sdk_hub.waiting if kind == KINDS[0] else await served_waiters(self.http)
            if now > before:
                return
            await asyncio.sleep(0.001 if kind == KINDS[0] else 0.005)
        raise TimeoutError(f"the {kind} waiter was never held")

    async def click(self, i: int, row: Row, phase: Phase | None) -> None:
        kind = KINDS[i % 2]
        before = self.sdk_hub.waiting if kind == KINDS[0] else await served_waiters(self.http)
        task = asyncio.create_task(self.waiter(kind, row[0]))
        await self.held(kind, before)
        body, headers = signed_click(self.team, "UALICE", row)
        t0 = time.perf_counter()
        resp = await self.slack.post("/slack/events", content=body, headers=headers)
        t1, state = await task
        assert resp.status_code == 200 and state == "approved", (resp.status_code, state)
        if phase is not None:
            phase.lat[kind].append((t1 - t0) * 1000)

    async def run(self, phase: Phase | None, rows: list[Row]) -> None:
        stop = asyncio.Event()
        bg = asyncio.create_task(self.background(phase or Phase("warm-up"), stop))
        try:
            for i, row in enumerate(rows):
                await self.click(i, row, phase)
        finally:
            stop.set()
            await bg

    async def close(self) -> None:
        await self.http.aclose()
        await self.slack.aclose()


async def hold_polls(url: str, n: int) -> None:
    """Subprocess mode: hold n long-polls over the request ids read from stdin's first
    line, re-polling each as it ends, until stdin closes; print status counts."""
    ids = json.loads(sys.stdin.readline())
    statuses: Counter[str] = Counter()
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=90, limits=limits) as c:

        async def poll(i: int) -> None:
            while True:
                try:
                    got = await c.get(f"/v1/approvals/{ids[i % len(ids)]}", params={"wait": 60})
                    key = str(got.status_code)
                    if got.status_code != 200:  # what went wrong, once per distinct answer
                        key += " " + got.text[:160]
                    statuses[key] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                    await asyncio.sleep(0.1)

        tasks = [asyncio.create_task(poll(i)) for i in range(n)]
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(statuses), flush=True)


async def bench(url: str, a: argparse.Namespace, policy_file: Path) -> None:
    counted = Counted()
    logging.getLogger().addHandler(counted)
    r = Redis.from_url(url, decode_responses=True)
    await r.flushdb()
    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    settings = Settings(
        slack_bot_token=SecretStr(TOKEN),
        slack_signing_secret=SecretStr(SECRET),
        slack_api_url=emu.api_url,
        redis_url=SecretStr(url),
        hitl_policy=policy_file,
        hitl_port=0,
        hitl_api_token=SecretStr(API_TOKEN),
    )
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(run_serve(settings, stop, on_ready=ready.set_result))
    bot = await asyncio.wait_for(ready, 10)
    sdk = await DirectBackend.open(settings, policy=parse_policy(POLICY), actor="bench-agent")
    b = Bench(bot, emu.workspace.team_id, sdk)
    holder: asyncio.subprocess.Process | None = None
    sdk_waits: list[asyncio.Task[object]] = []
    try:
        store, policy = RequestStore(r), parse_policy(POLICY)
        t0 = time.perf_counter()
        ids = []
        for _ in range(2 * a.n + 20 + HELD_ON):
            made = await store.create(policy, tool="refund", args=REFUND, requester="U0REQUEST")
            ids.append(made.request.id)
        rows = await posted(r, ids[: 2 * a.n + 20])
        held_ids = ids[2 * a.n + 20 :]
        print(f"created and posted {len(ids):,} requests in {time.perf_counter() - t0:.1f} s")
        await b.run(None, rows[:20])  # warm-up: connections, auth.test, scripts
        baseline, loaded = Phase("no other waiters"), Phase(f"{a.polls} polls + {a.sdk} SDK")
        await b.run(baseline, rows[20 : 20 + a.n])

        t0 = time.perf_counter()
        holder = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--hold",
            bot,
            "--polls",
            str(a.polls),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert holder.stdin is not None
        holder.stdin.write(json.dumps(held_ids).encode() + b"\n")
        await holder.stdin.drain()
        sdk_waits = [
            asyncio.create_task(sdk.wait(held_ids[i % len(held_ids)], 600)) for i in range(a.sdk)
        ]
        while await served_waiters(b.http) < a.polls or b.sdk_hub.waiting < a.sdk:
            await asyncio.sleep(0.05)
        took = time.perf_counter() - t0
        print(f"{a.polls:,} long-polls and {a.sdk:,} SDK waits held after {took:.1f} s\n")
        await b.run(loaded, rows[20 + a.n :])
        still = await served_waiters(b.http), b.sdk_hub.waiting
        holder.stdin.close()
        out, _ = await asyncio.wait_for(holder.communicate(), 30)
        polls_seen = json.loads(out.decode().strip().splitlines()[-1] or "{}")
        report(baseline, loaded, counted.dry, still, polls_seen)
    finally:
        for t in sdk_waits:
            t.cancel()
        await asyncio.gather(*sdk_waits, return_exceptions=True)
        if holder is not None and holder.returncode is None:
            holder.kill()
            await holder.wait()
        await b.close()
        await sdk.aclose()
        stop.set()
        await asyncio.wait_for(serving, 15)
        await emu.stop()
        await r.flushdb()
        await r.aclose()


def report(
    base: Phase, held: Phase, dry: int, still: tuple[int, int], polls: dict[str, int]
) -> None:
    print("click -> waiter holds `approved`, ms (one click at a time)")
    print(f"  {'phase':<26}{'waiter':<16}{'count':>7}{'p50':>8}{'p99':>8}{'max':>8}")
    for ph in (base, held):
        every = [x for xs in ph.lat.values() for x in xs]
        for kind, xs in [*ph.lat.items(), ("both", every)]:
            print(
                f"  {ph.name:<26}{kind:<16}{len(xs):>7}"
                f"{pct(xs, 50):>8.2f}{pct(xs, 99):>8.2f}{max(xs):>8.2f}"
            )
    for ph in (base, held):
        print(f"  {ph.name}: /healthz {dict(ph.health)}, creates {dict(ph.creates)}")
    print(f"  still held at the end: {still[0]} long-polls, {still[1]} SDK waits")
    print(f"  the held long-polls' own answers: {polls or 'none ended'}")
    print(f"  log records saying 'Too many connections': {dry}")
    print(f"  /metrics answers without the gauge: {dict(METRICS_FAILED) or 'none'}\n")
    every = [x for xs in held.lat.values() for x in xs]
    p99 = pct(every, 99)
    healthy = set(held.health) == {200} and set(held.creates) == {201} and dry == 0
    print(verdict("click-to-decision p99 with waiters held, ms", p99, "< 100", p99 < 100, ".1f"))
    print(
        f"/healthz 200 and creates 201 throughout, no pool errors: {'PASS' if healthy else 'MISS'}"
    )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200, help="timed clicks per phase")
    ap.add_argument("--polls", type=int, default=1000, help="long-polls held")
    ap.add_argument("--sdk", type=int, default=1000, help="SDK waits held")
    ap.add_argument("--hold", metavar="URL", help=argparse.SUPPRESS)  # the subprocess's mode
    a = ap.parse_args()
    if a.hold:
        await hold_polls(a.hold, a.polls)
        return
    print_load()
    with tempfile.TemporaryDirectory() as tmp, server_url() as url:
        policy_file = Path(tmp) / "policy.yaml"
        policy_file.write_text(yaml.safe_dump(POLICY))
        await bench(url, a, policy_file)


if __name__ == "__main__":
    asyncio.run(main())
