"""HTTP API throughput: POST /v1/approvals from concurrent clients, beside the bare store.

(a) the store in this process: RequestStore.create, then RequestStore.transition
    (approve) of what it created, from --clients loops, each with its own connection;
(b) the API in a SUBPROCESS, so client and server do not share a Python process:
    `python -m bot serve` (--server serve, the default: the whole bot, whose notifier
    finds no Slack at SLACK_API_URL, an unused port, and backs off) or the API alone,
    bot.api.create_app under uvicorn (--server api); --clients httpx clients, each
    with one keep-alive connection, POST the same body as (a) creates.
(a) runs first and the database is flushed before the server starts, so the bot never
sees (a)'s requests. Prints figures and PASS/MISS for issue 13's target: the API at
>= 0.5 x the store. Starts its own Valkey unless REDIS_URL is set (that database is
FLUSHED).

    .venv/bin/python bench/api_throughput.py [--n 3000] [--rounds 3] [--clients 32]
        [--server serve|api]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
from _common import (
    REFUND,
    create_many,
    fan_out,
    print_load,
    server_cpu,
    server_url,
    verdict,
)
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import DEFAULT_POLICY
from bot.core.states import Event
from bot.store.requests import RequestStore

TOKEN = "bench-api-token"
ROOT = Path(__file__).resolve().parent.parent
SERVE_API = """
import asyncio, uvicorn
from bot.api.app import create_app
from bot.config import Settings
from bot.runtime import open_runtime

async def main():
    s = Settings.load()
    async with open_runtime(s) as rt:
        config = uvicorn.Config(create_app(rt), host=s.hitl_host, port=s.hitl_port,
                                log_level="warning", access_log=False, lifespan="off")
        await uvicorn.Server(config).serve()

asyncio.run(main())
"""
Row = tuple[float, float, float, float]  # ops/s, client, server process, Valkey CPU us/op
WHO = ("client", "server", "Valkey")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + sys) of a process, from /proc (Linux); nan elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(kind: str, url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_"))}
    env.update(
        REDIS_URL=url,
        HITL_API_TOKEN=TOKEN,
        HITL_HOST="127.0.0.1",
        HITL_PORT=str(port),
        SLACK_BOT_TOKEN="xoxb-bench-unused",
        SLACK_SIGNING_SECRET="bench-unused",
        SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/",  # nothing listens there
    )
    cmd = ["-m", "bot", "serve"] if kind == "serve" else ["-c", SERVE_API]
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, *cmd], env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )


async def healthy(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=2) as c:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited ({proc.returncode}):\n{log.read_text()}")
            try:
                if (await c.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"no /healthz in 30 s:\n{log.read_text()}")


async def store_rounds(url: str, n: int, rounds: int, clients: int) -> dict[str, list[Row]]:
    conns = [Redis.from_url(url, decode_responses=True) for _ in range(clients)]
    stores = [RequestStore(c) for c in conns]
    await create_many(stores, 2 * clients)  # warm-up: connections, scripts
    out: dict[str, list[Row]] = {"RequestStore.create": [], "RequestStore.transition": []}
    made: list[tuple[str, str]] = [("", "")] * n  # this round's (id, payload hash)

    async def create(w: int, i: int) -> None:
        # The built-in default policy: what the server uses without HITL_POLICY.
        c = await stores[w].create(
            DEFAULT_POLICY, tool="refund", args=REFUND, requester="U0REQUEST"
        )
        made[i] = (c.request.id, c.request.payload_hash)

    async def approve(w: int, i: int) -> None:
        # a member of the default policy's review channel, as Slack's listener names one
        d = Decision(
            event=Event.APPROVE,
            actor="U0APPROVER",
            actor_groups=("#hitl-approvals",),
            payload_hash=made[i][1],
        )
        await stores[w].transition(made[i][0], d)

    for _ in range(rounds):
        for name, op in (("RequestStore.create", create), ("RequestStore.transition", approve)):
            s0, p0 = await server_cpu(conns[0]), time.process_time()
            took = await fan_out(clients, n, op)
            p1, s1 = time.process_time(), await server_cpu(conns[0])
            out[name].append((n / took, (p1 - p0) / n * 1e6, 0.0, (s1 - s0) / n * 1e6))
    await conns[0].flushdb()
    for c in conns:
        await c.aclose()
    return out


async def api_rounds(
    url: str, base: str, pid: int, n: int, rounds: int, clients: int
) -> tuple[list[Row], list[float], Counter[int]]:
    r = Redis.from_url(url, decode_responses=True)
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    http = [httpx.AsyncClient(base_url=base, headers=auth, timeout=30) for _ in range(clients)]
    # no requester: the API takes it from the token (a different one is a 403)
    body = json.dumps({"tool": "refund", "args": REFUND}).encode()
    statuses: Counter[int] = Counter()
    lat: list[float] = []

    async def post(w: int, i: int) -> None:
        t0 = time.perf_counter()
        resp = await http[w].post("/v1/approvals", content=body)
        lat.append((time.perf_counter() - t0) * 1000)
        statuses[resp.status_code] += 1

    await fan_out(clients, 4 * clients, post)  # warm-up: connections, scripts
    lat.clear()
    statuses.clear()
    rows = []
    for _ in range(rounds):
        s0, c0, p0 = await server_cpu(r), proc_cpu(pid), time.process_time()
        took = await fan_out(clients, n, post)
        p1, c1, s1 = time.process_time(), proc_cpu(pid), await server_cpu(r)
        rows.append((n / took, (p1 - p0) / n * 1e6, (c1 - c0) / n * 1e6, (s1 - s0) / n * 1e6))
        print(f"  round {len(rows)}: POST /v1/approvals {n / took:,.0f}/s")
    for c in http:
        await c.aclose()
    await r.aclose()
    return rows, lat, statuses


def table(title: str, got: dict[str, list[Row]]) -> None:
    print(title)
    print(f"  {'':<24}{'best/s':>8}{'median/s':>10}   CPU us per op (best round):")
    print(f"  {'':<42}{'client':>8}{'server':>8}{'Valkey':>8}")
    for name, rows in got.items():
        best = max(rows)
        mid = statistics.median(x[0] for x in rows)
        srv = f"{best[2]:>8.0f}" if best[2] else f"{'-':>8}"
        print(f"  {name:<24}{best[0]:>8,.0f}{mid:>10,.0f}{best[1]:>16.0f}{srv}{best[3]:>8.0f}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=3_000, help="requests per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=32, help="concurrent clients")
    ap.add_argument("--server", choices=("serve", "api"), default="serve")
    a = ap.parse_args()
    print_load()
    with server_url() as url, tempfile.TemporaryDirectory() as tmp:
        store = await store_rounds(url, a.n, a.rounds, a.clients)
        port, log = free_port(), Path(tmp) / "server.log"
        proc = start_server(a.server, url, port, log)
        base = f"http://127.0.0.1:{port}"
        try:
            await healthy(proc, base, log)
            api, lat, statuses = await api_rounds(url, base, proc.pid, a.n, a.rounds, a.clients)
        finally:
            proc.terminate()
            proc.wait(15)
    what = "`python -m bot serve`" if a.server == "serve" else "create_app under uvicorn"
    print()
    table(f"(a) in-process store, {a.clients} clients x 1 connection, n={a.n}", store)
    print()
    table(
        f"(b) HTTP, {a.clients} httpx clients -> {what} (subprocess), n={a.n}",
        {"POST /v1/approvals": api},
    )
    lat.sort()
    p50, p99 = lat[len(lat) // 2], lat[int(0.99 * len(lat))]
    best = max(api)
    busy = [f"{who} {us * best[0] / 1e4:.0f}%" for who, us in zip(WHO, best[1:], strict=True)]
    print(f"  busy in the best round, % of one core: {', '.join(busy)} ({os.cpu_count()} CPUs)")
    print(f"  per request at the client: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    print(f"  HTTP status counts: {dict(statuses)}")
    api_best, create_best = max(api)[0], max(store["RequestStore.create"])[0]
    print()
    ratio = api_best / create_best
    print(
        f"POST /v1/approvals: {api_best:,.0f}/s vs RequestStore.create's {create_best:,.0f}/s "
        "(best rounds)"
    )
    print(verdict("POST /v1/approvals / in-process create", ratio, ">= 0.5", ratio >= 0.5, ".2f"))


if __name__ == "__main__":
    asyncio.run(main())
