"""HTTP API throughput: POST /v1/approvals from concurrent clients, beside the bare store.

The baseline, (a): the store in this process, RequestStore.create (then
RequestStore.transition, approve, of what it created) from --clients loops, each with
its own connection. That is the work the server does for one POST without HTTP.
The measured thing, (b): the API in a SUBPROCESS, so client and server do not share a
Python process: `python -m bot serve` (--server serve, the default: the whole bot,
whose notifier finds no Slack at SLACK_API_URL, an unused port, and backs off) or the
API alone, bot.api.create_app served by bot.asgi as `serve` serves it (--server api).
--clients clients, each with one keep-alive connection, POST the same body as (a)
creates. The clients are raw HTTP/1.1 on asyncio streams (--client raw, ~0.15 ms of
CPU a request) so that the figure is the server's: httpx (--client httpx) costs
1.3-2 ms a request and took a core of these 2 by itself. The server runs on
uvloop (HITL_UVLOOP=1) when it is installed, unless --loop asyncio.
The rounds alternate, (a) then (b), so both see the same load from the rest of this
shared machine, and the verdict is the median over rounds of (b)'s rate / the (a)
round's just before it. (a) uses the next database of the same server, so the bot
never sees (a)'s requests (with --server serve its notifier would try to post them
all); both databases are FLUSHED at the end. Then, for
--server api, cProfile's top lines in the server over --profile more POSTs (after the
measured rounds, which it would slow). Prints figures and PASS/MISS for the
target: the API at >= 0.5 x the store. Starts its own Valkey unless REDIS_URL is set
(use a scratch server).

    .venv/bin/python bench/api_throughput.py [--n 3000] [--rounds 3] [--clients 32]
        [--server serve|api] [--client raw|httpx] [--loop uvloop|asyncio] [--profile 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import json
import os
import pstats
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

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

from bot.asgi import HTTP_PARSER
from bot.core.models import Decision
from bot.core.policy import DEFAULT_POLICY
from bot.core.states import Event
from bot.store.requests import RequestStore

TOKEN = "bench-api-token-0123"
ROOT = Path(__file__).resolve().parent.parent
SERVE_API = """
import asyncio, cProfile, os, signal
from bot.server import eventloop as loops
from bot.api.app import create_app
from bot.asgi import serve_asgi
from bot.config import Settings
from bot.gate.runtime import open_runtime

async def main(s):
    async with open_runtime(s) as rt:
        await serve_asgi(create_app(rt), s.hitl_host, s.hitl_port)  # as `serve` does
        if out := os.environ.get("BENCH_PROFILE"):  # SIGUSR1 starts cProfile, SIGUSR2 saves it
            prof = cProfile.Profile()
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGUSR1, prof.enable)
            loop.add_signal_handler(signal.SIGUSR2, lambda: (prof.disable(), prof.dump_stats(out)))
        await asyncio.Event().wait()

s = Settings.load()
loops.run(main(s), uvloop=s.hitl_uvloop)
"""
DEFAULT_LOOP = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
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


def start_server(
    kind: str, url: str, port: int, log: Path, prof: Path | None, loop: str
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_"))}
    env.update(
        REDIS_URL=url,
        HITL_API_TOKEN=TOKEN,
        HITL_HOST="127.0.0.1",
        HITL_PORT=str(port),
        SLACK_BOT_TOKEN="xoxb-bench-unused",
        SLACK_SIGNING_SECRET="bench-unused",
        SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/",  # nothing listens there
        HITL_UVLOOP="1" if loop == "uvloop" else "0",
    )
    if prof is not None:
        env["BENCH_PROFILE"] = str(prof)
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


def next_db(url: str) -> str:
    """The same server, the next database: (a)'s requests stay out of the bot's sight."""
    parts = urlsplit(url)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{db + 1}"))


class StoreRounds:
    """(a): RequestStore.create, then .transition (approve) of what it created, in-process."""

    NAMES = ("RequestStore.create", "RequestStore.transition")

    def __init__(self, url: str, clients: int) -> None:
        self.clients = clients
        self.conns = [Redis.from_url(url, decode_responses=True) for _ in range(clients)]
        self.stores = [RequestStore(c) for c in self.conns]
        self.rows: dict[str, list[Row]] = {name: [] for name in self.NAMES}

    async def warm_up(self) -> None:
        await create_many(self.stores, 2 * self.clients)  # connections, scripts

    async def round(self, n: int) -> None:
        made: list[tuple[str, str]] = [("", "")] * n  # this round's (id, payload hash)

        async def create(w: int, i: int) -> None:
            # The built-in default policy: what the server uses without HITL_POLICY.
            c = await self.stores[w].create(
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
            await self.stores[w].transition(made[i][0], d)

        for name, op in zip(self.NAMES, (create, approve), strict=True):
            s0, p0 = await server_cpu(self.conns[0]), time.process_time()
            took = await fan_out(self.clients, n, op)
            p1, s1 = time.process_time(), await server_cpu(self.conns[0])
            self.rows[name].append((n / took, (p1 - p0) / n * 1e6, 0.0, (s1 - s0) / n * 1e6))

    async def close(self) -> None:
        for c in self.conns:
            await c.aclose()


class RawClient:
    """HTTP/1.1 on one keep-alive connection over asyncio streams, for the measured rounds.

    It costs tens of microseconds of CPU per request where httpx costs about 2 ms, so
    the rounds measure the server rather than the client sharing its 2 cores. It
    reads exactly what the server sends (Content-Length bodies, which every response
    of this API has) and checks nothing else; the status line is what it counts.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.head = (
            f"POST /v1/approvals HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, body: bytes) -> int:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(b"%sContent-Length: %d\r\n\r\n%s" % (self.head, len(body), body))
        head = await self.reader.readuntil(b"\r\n\r\n")
        at = head.lower().find(b"\r\ncontent-length:")
        if at < 0:
            raise RuntimeError(f"a response without Content-Length: {head!r}")
        length = int(head[at + 17 : head.index(b"\r\n", at + 2)])
        await self.reader.readexactly(length)
        return int(head[9:12])

    async def reconnect(self) -> None:
        """A fresh connection: uvicorn closes one idle for 5 s (during the store rounds)."""
        await self.aclose()
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def aclose(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()
        self.reader = self.writer = None


class HttpxClient:
    """The previous client (--client httpx): one httpx.AsyncClient, one connection."""

    def __init__(self, base: str) -> None:
        auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        self.http = httpx.AsyncClient(base_url=base, headers=auth, timeout=30)

    async def post(self, body: bytes) -> int:
        return (await self.http.post("/v1/approvals", content=body)).status_code

    async def reconnect(self) -> None:
        pass  # httpx opens a new connection by itself when the server closed one

    async def aclose(self) -> None:
        await self.http.aclose()


class ApiRounds:
    """(b): POST /v1/approvals to the server subprocess, the body (a) creates from."""

    def __init__(self, url: str, port: int, pid: int, a: argparse.Namespace) -> None:
        self.r = Redis.from_url(url, decode_responses=True)
        self.pid, self.clients = pid, a.clients
        base = f"http://127.0.0.1:{port}"
        self.http = [
            RawClient("127.0.0.1", port) if a.client == "raw" else HttpxClient(base)
            for _ in range(a.clients)
        ]
        # no requester: the API takes it from the token (a different one is a 403)
        self.body = json.dumps({"tool": "refund", "args": REFUND}).encode()
        self.statuses: Counter[int] = Counter()
        self.lat: list[float] = []
        self.rows: list[Row] = []

    async def post(self, w: int, i: int) -> None:
        t0 = time.perf_counter()
        self.statuses[await self.http[w].post(self.body)] += 1
        self.lat.append((time.perf_counter() - t0) * 1000)

    async def warm_up(self) -> None:
        await fan_out(self.clients, 4 * self.clients, self.post)  # connections, scripts
        self.lat.clear()
        self.statuses.clear()

    async def round(self, n: int) -> None:
        await asyncio.gather(*(c.reconnect() for c in self.http))
        s0, c0, p0 = await server_cpu(self.r), proc_cpu(self.pid), time.process_time()
        took = await fan_out(self.clients, n, self.post)
        p1, c1, s1 = time.process_time(), proc_cpu(self.pid), await server_cpu(self.r)
        self.rows.append((n / took, (p1 - p0) / n * 1e6, (c1 - c0) / n * 1e6, (s1 - s0) / n * 1e6))

    async def close(self) -> None:
        for c in self.http:
            await c.aclose()
        await self.r.aclose()


TOP = 15


async def profiled(
    pid: int, m: int, out: Path | None, run: Callable[[int], Awaitable[float]]
) -> str:
    """cProfile in the server over m more requests (after the measured rounds, which it
    would slow): the top lines by own time. Only the API-alone server (SERVE_API) has it."""
    if not m or out is None:
        return ""
    os.kill(pid, signal.SIGUSR1)
    await asyncio.sleep(0.2)  # the server's loop runs the handler between requests
    await run(m)
    os.kill(pid, signal.SIGUSR2)
    for _ in range(100):
        if out.exists() and out.stat().st_size:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.2)  # dump_stats writes in one go; let it finish
    buf = io.StringIO()
    pstats.Stats(str(out), stream=buf).sort_stats("tottime").print_stats(TOP)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    return "\n".join("  " + shorten(ln) for ln in lines[start:])


def shorten(line: str) -> str:
    for prefix in sorted({str(ROOT) + "/", *(p + "/" for p in sys.path if p)}, key=len)[::-1]:
        line = line.replace(prefix, "")
    return line


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
    ap.add_argument("--client", choices=("raw", "httpx"), default="raw")
    ap.add_argument("--loop", choices=("uvloop", "asyncio"), default=DEFAULT_LOOP)
    ap.add_argument(
        "--profile", type=int, default=1_000, help="requests profiled in the API alone (0: none)"
    )
    a = ap.parse_args()
    print_load()
    with server_url() as url, tempfile.TemporaryDirectory() as tmp:
        port, log = free_port(), Path(tmp) / "server.log"
        prof = Path(tmp) / "server.prof" if a.server == "api" else None
        proc = start_server(a.server, url, port, log, prof, a.loop)
        try:
            await healthy(proc, f"http://127.0.0.1:{port}", log)
            store = StoreRounds(next_db(url), a.clients)
            api = ApiRounds(url, port, proc.pid, a)
            await store.warm_up()
            await api.warm_up()
            # Interleaved, so that both see the same load from the rest of the machine.
            for i in range(a.rounds):
                await store.round(a.n)
                await api.round(a.n)
                create, post = store.rows["RequestStore.create"][-1][0], api.rows[-1][0]
                print(f"  round {i + 1}: create {create:,.0f}/s, POST {post:,.0f}/s")
            profile = await profiled(
                proc.pid, a.profile, prof, lambda m: fan_out(a.clients, m, api.post)
            )
            await store.conns[0].flushdb()
            await api.r.flushdb()
            await store.close()
            await api.close()
        finally:
            proc.terminate()
            proc.wait(15)
    what = "`python -m bot serve`" if a.server == "serve" else "the API alone"
    what += f" on {a.loop}, uvicorn's {HTTP_PARSER} parser"
    print()
    table(f"(a) in-process store, {a.clients} clients x 1 connection, n={a.n}", store.rows)
    print()
    table(
        f"(b) HTTP, {a.clients} {a.client} clients -> {what} (subprocess), n={a.n}",
        {"POST /v1/approvals": api.rows},
    )
    lat = sorted(api.lat)
    p50, p99 = lat[len(lat) // 2], lat[int(0.99 * len(lat))]
    best = max(api.rows)
    busy = [f"{who} {us * best[0] / 1e4:.0f}%" for who, us in zip(WHO, best[1:], strict=True)]
    print(f"  busy in the best round, % of one core: {', '.join(busy)} ({os.cpu_count()} CPUs)")
    print(f"  per request at the client: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    print(f"  HTTP status counts: {dict(api.statuses)}")
    if profile:
        print(f"\ncProfile in the server, {a.profile} more POSTs: top {TOP} by own time")
        print(profile)
    creates = store.rows["RequestStore.create"]
    api_best, create_best = max(api.rows)[0], max(creates)[0]
    paired = [p[0] / c[0] for p, c in zip(api.rows, creates, strict=True)]
    ratio = statistics.median(paired)
    print()
    print(
        f"POST /v1/approvals: {api_best:,.0f}/s vs RequestStore.create's {create_best:,.0f}/s "
        f"(best rounds, {api_best / create_best:.2f}); each round's POST / the create round "
        f"just before it: {', '.join(f'{x:.2f}' for x in paired)}; median {ratio:.2f}"
    )
    print(verdict("POST /v1/approvals / in-process create", ratio, ">= 0.5", ratio >= 0.5, ".2f"))


if __name__ == "__main__":
    asyncio.run(main())
