"""Click-to-decision latency: a signed Slack button click until a waiter holds the decision.

Runs the real bot in this process (`run_serve`, as tests/e2e do) against the Slack
emulator, creates --n pending requests (not timed) and, for each in turn, starts a
waiter, waits until a wait hub in this process holds it (ours or the bot's), then
POSTs a signed `block_actions` approve to /slack/events and times from just before
the POST until the waiter returns `approved`. Waiters alternate: the store's push
wait (`RequestStore.wait`, what the SDK's direct mode uses) and the HTTP long-poll
`GET /v1/approvals/{id}?wait=10`.
Before each click the notifier's outbox is drained, so a click never queues behind
the Slack updates of the one before. A bare PING is timed before every click.
Prints figures; not a test. Starts its own Valkey unless REDIS_URL is set (FLUSHED).

--pending N: a second Valkey is filled with N pending requests first (the shared
pipelined filler, bench/_common.py; deadlines an hour out, so no sweeper fires),
with a second bot on it; the clicks alternate between the empty store and the full
one, so both see the same machine load, and the full store's p99 is judged against
the empty store's from the same run. The filler's creates were delivered long ago
in a real store: the notifier's group starts after them instead of posting them.

    .venv/bin/python bench/click_latency.py [--n 1000] [--concurrency 1] [--pending 0]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from pathlib import Path
from urllib.parse import urlencode

import httpx
import yaml
from _common import (
    REFUND,
    Filler,
    embedded_memory,
    flush,
    print_load,
    server_url,
    used_memory,
    verdict,
)
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.clock import wall_ms
from bot.config import Settings
from bot.core.policy import parse_policy
from bot.db import hub
from bot.sandbox.slack import SlackEmulator
from bot.server.serve import run_serve
from bot.slack.blocks.render import ACTION_APPROVE, ButtonValue
from bot.store import keys
from bot.store.figures.metrics import GROUP as METRICS_GROUP
from bot.store.requests import RequestStore
from bot.store.stream.events import NOTIFIER_GROUP

SECRET, TOKEN, API_TOKEN = "bench-signing-secret", "xoxb-bench-token", "bench-api-token-0123"
TIERS = ("low", "medium", "high", "critical")
LEVEL = {"review_timeout": "1h", "reviewers": {"channels": ["#hitl-approvals"]}}
# One level, anyone may approve, one approval: a click decides.
POLICY = {"tiers": {t: {**LEVEL, "approvers": ["*"], "approvals_required": 1} for t in TIERS}}
KINDS = ("store wait", "HTTP long-poll")
Row = tuple[str, str, str, str]  # request id, payload hash, channel, message ts


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def signed_click(team: str, user: str, row: Row) -> tuple[bytes, dict[str, str]]:
    rid, phash, channel, ts = row
    payload = {
        "type": "block_actions",
        "team": {"id": team, "domain": "bench"},
        "user": {"id": user, "username": "alice", "team_id": team},
        "api_app_id": "A0BENCH",
        "trigger_id": f"{time.time():.6f}.bench",
        "channel": {"id": channel, "name": "hitl-approvals"},
        "container": {"type": "message", "message_ts": ts, "channel_id": channel},
        "message": {"type": "message", "ts": ts, "text": ""},
        "actions": [
            {
                "type": "button",
                "action_id": ACTION_APPROVE,
                "block_id": "hitl_actions",
                "value": ButtonValue.encode(rid, phash),
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    stamp = str(int(time.time()))
    mac = hmac.new(SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256)
    return body, {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": "v0=" + mac.hexdigest(),
    }


async def drained(r: Redis) -> None:
    """Until the notifier has read and delivered every event (lag 0, pending 0)."""
    for _ in range(5000):
        groups = [await r.xinfo_groups(keys.events(s)) for s in range(keys.SHARDS)]
        if all(not g["pending"] and not g.get("lag") for gs in groups for g in gs):
            return
        await asyncio.sleep(0.002)
    raise TimeoutError("the notifier did not drain its outbox in 10 s")


STARTED = [0]  # waiters started and not yet returned, over every loop and store


def held() -> int:
    """Waiters registered with a wait hub of this process: ours and the bots'. Not the
    bot's /metrics: its pending gauge reads every pending request, 1M HGETs at scale."""
    return sum(h.waiting for h in list(hub._hubs.values()))


class Clicks:
    def __init__(self, redis: Redis, url: str, bot: str, team: str) -> None:
        self.r = redis
        self.store = RequestStore(Redis.from_url(url, decode_responses=True, socket_timeout=None))
        self.http = httpx.AsyncClient(
            base_url=bot, headers={"Authorization": f"Bearer {API_TOKEN}"}, timeout=30
        )
        self.slack = httpx.AsyncClient(base_url=bot, timeout=30)
        self.team = team
        self.lat: dict[str, list[float]] = {k: [] for k in KINDS}
        self.acks: list[float] = []
        self.pings: list[float] = []
        self.rows: list[Row] = []

    async def waiter(self, kind: str, rid: str) -> tuple[float, str]:
        try:
            if kind == KINDS[0]:
                state = (await self.store.wait(rid, 10)).state.value
            else:
                got = await self.http.get(f"/v1/approvals/{rid}", params={"wait": 10})
                state = got.json()["state"]
            return time.perf_counter(), state
        finally:
            STARTED[0] -= 1

    async def one(self, i: int, row: Row, timed: bool) -> None:
        kind = KINDS[i % 2]
        await drained(self.r)
        p0 = time.perf_counter()
        await self.r.ping()
        ping_ms = (time.perf_counter() - p0) * 1000
        STARTED[0] += 1
        task = asyncio.create_task(self.waiter(kind, row[0]))
        give_up = time.monotonic() + 5
        while held() < STARTED[0] and not task.done():
            if time.monotonic() > give_up:
                raise TimeoutError(f"the {kind} waiter for {row[0]} was never held")
            await asyncio.sleep(0.001)
        body, headers = signed_click(self.team, "UALICE", row)
        t0 = time.perf_counter()
        resp = await self.slack.post("/slack/events", content=body, headers=headers)
        t_ack = time.perf_counter()
        t1, state = await task
        assert resp.status_code == 200 and state == "approved", (resp.status_code, state)
        if timed:
            self.lat[kind].append((t1 - t0) * 1000)
            self.acks.append((t_ack - t0) * 1000)
            self.pings.append(ping_ms)

    async def close(self) -> None:
        await self.http.aclose()
        await self.slack.aclose()
        await self.store.redis.aclose()


async def run(sides: list[Clicks], lo: int, hi: int, concurrency: int, timed: bool) -> float:
    """Clicks rows[lo:hi] of every side, each row on every side in turn; which side goes
    first swaps every other pair of rows, so each waiter kind sees both orders."""

    async def loop(w: int) -> None:
        for i in range(lo + w, hi, concurrency):
            for c in sides if (i // 2) % 2 == 0 else sides[::-1]:
                await c.one(i, c.rows[i], timed)

    t0 = time.perf_counter()
    await asyncio.gather(*(loop(w) for w in range(concurrency)))
    return time.perf_counter() - t0


async def posted(r: Redis, ids: list[str]) -> list[Row]:
    """Each request's (id, hash, channel, ts) once the notifier posted its message."""
    for _ in range(1200):
        pipe = r.pipeline(transaction=False)
        for rid in ids:
            pipe.hmget(keys.request(rid), ["payload_hash", "msg_channel", "msg_ts"])
        got = await pipe.execute()
        if all(ch and ts for _, ch, ts in got):
            return [(rid, *g) for rid, g in zip(ids, got, strict=True)]
        await asyncio.sleep(0.1)
    raise TimeoutError("the notifier did not post every request within 120 s")


@asynccontextmanager
async def bot(url: str, emu: SlackEmulator, policy_file: Path, n: int) -> AsyncIterator[Clicks]:
    """A bot serving the store at url, with n + 20 posted requests to click."""
    r = Redis.from_url(url, decode_responses=True)
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
    task = asyncio.create_task(run_serve(settings, stop, on_ready=ready.set_result))
    clicks = Clicks(r, url, await asyncio.wait_for(ready, 10), emu.workspace.team_id)
    try:
        store, policy = RequestStore(r), parse_policy(POLICY)
        t0 = time.perf_counter()
        ids = []
        for _ in range(n + 20):
            made = await store.create(policy, tool="refund", args=REFUND, requester="U0REQUEST")
            ids.append(made.request.id)
        clicks.rows = await posted(r, ids)
        print(f"created and posted {len(ids):,} requests in {time.perf_counter() - t0:.1f} s")
        yield clicks
    finally:
        await clicks.close()
        stop.set()
        await asyncio.wait_for(task, 15)
        await r.flushdb()
        await r.aclose()


async def fill(url: str, pending: int) -> None:
    """pending requests, their deadlines an hour out; their events count as delivered."""
    r = Redis.from_url(url, decode_responses=True)
    await flush(r)
    await embedded_memory(r)
    empty, now = await used_memory(r), wall_ms()
    await Filler(parse_policy(POLICY)).fill(url, pending, lambda i: now)
    for s in range(keys.SHARDS):  # every group the bot reads, or it starts 1M events behind
        for group in (NOTIFIER_GROUP, METRICS_GROUP):
            await r.xgroup_create(keys.events(s), group, id="$", mkstream=True)
    per = (await used_memory(r) - empty) / pending
    print(f"  {per:,.0f} B per pending request (used_memory, the embedded Valkey's encodings)")
    await r.aclose()


async def bench(urls: list[str], n: int, concurrency: int, pending: int, policy: Path) -> None:
    emu = SlackEmulator(signing_secret=SECRET, bot_token=TOKEN)
    await emu.start()
    try:
        if pending:
            await fill(urls[1], pending)
        async with AsyncExitStack() as stack:
            sides = [await stack.enter_async_context(bot(u, emu, policy, n)) for u in urls]
            await run(sides, 0, 20, 1, timed=False)  # warm-up: connections, auth.test, scripts
            took = await run(sides, 20, n + 20, concurrency, timed=True)
            print(f"{n:,} clicks per store in {took:.1f} s, {concurrency} at a time\n")
            names = ["empty store", f"{pending:,} pending"] if pending else [""]
            for c, name in zip(sides, names, strict=True):
                report(c, n, concurrency, name)
            if pending:
                compare(sides[0], sides[1], pending)
    finally:
        await emu.stop()


def report(c: Clicks, n: int, concurrency: int, name: str) -> None:
    where = f", {name}" if name else ""
    print(f"click -> waiter holds `approved`, ms ({n:,} clicks, {concurrency} at a time{where})")
    print(f"  {'':<34}{'count':>7}{'p50':>8}{'p99':>8}{'max':>8}")
    for name, xs in [
        *((f"waiter: {k}", v) for k, v in c.lat.items()),
        ("POST /slack/events answered (ack)", c.acks),
        ("bare Redis PING (same loop)", c.pings),
    ]:
        print(f"  {name:<34}{len(xs):>7}{pct(xs, 50):>8.2f}{pct(xs, 99):>8.2f}{max(xs):>8.2f}")
    print("  (the ack trails the decision: Bolt's async runner polls for ack() every 10 ms)\n")
    for k, xs in c.lat.items():
        p99 = pct(xs, 99)
        print(verdict(f"click-to-decision p99, {k}{where}, ms", p99, "< 50", p99 < 50, ".1f"))
    print()


def compare(empty: Clicks, full: Clicks, pending: int) -> None:
    for k in KINDS:
        base, p99 = pct(empty.lat[k], 99), pct(full.lat[k], 99)
        name = f"click-to-decision p99, {k}, {pending:,} pending vs empty store, ms"
        value = f"{p99:.1f} vs {base:.1f} = {p99 / base:.2f}x"
        ok = p99 <= 2 * base
        print(f"{name}: {value} (target <= 2x) {'PASS' if ok else 'MISS'}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000, help="clicks (half per waiter kind)")
    ap.add_argument("--concurrency", type=int, default=1, help="clicks in flight at once")
    ap.add_argument("--pending", type=int, default=0, help="pending requests in a second store")
    a = ap.parse_args()
    print_load()
    with ExitStack() as stack:
        policy_file = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "policy.yaml"
        policy_file.write_text(yaml.safe_dump(POLICY))
        urls = [stack.enter_context(server_url())]
        if a.pending:
            urls.append(stack.enter_context(server_url(fresh=True)))
        await bench(urls, a.n, a.concurrency, a.pending, policy_file)


if __name__ == "__main__":
    asyncio.run(main())
