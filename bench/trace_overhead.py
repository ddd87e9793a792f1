"""Trace overhead: what a free tool call (low risk, `review: none`) costs through the SDK
over HTTP against a real `serve`, with tracing on and off, in one run.

Tracing on: the agent holds a span (the SDK sends its `traceparent`) and `serve` emits
each request's span (an OTel SDK batch processor, into an in-memory exporter, so no
collector's speed is measured). Off: no span, no tracer. Blocks of calls alternate
between the two (a `serve` started for each block, on the same Valkey), each call timed
beside a direct call of the same function, so both settings see the same machine.
Prints p50 and p90 of the added time for each and their ratio, and PASS/MISS: tracing
adds at most 10% to a free call's p50 (or 0.1 ms, whichever is more). Not a test. Starts
its own Valkey unless REDIS_URL is set (that database is FLUSHED).

    .venv/bin/python bench/trace_overhead.py [--n 300] [--blocks 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from _common import print_load, server_url, verdict
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from bot.config import Settings
from bot.sandbox.slack import SlackEmulator
from bot.sdk import Gate, require_approval
from bot.server.serve import ServeOptions, run_serve
from bot.store import keys
from bot.telemetry import spans

LEVEL = {"review_timeout": "4h", "reviewers": {"channels": ["#hitl-approvals"]}, "approvers": ["*"]}
POLICY = {
    "tiers": {t: LEVEL for t in ("low", "medium", "high", "critical")},
    "tools": {"note": {"tier": "low", "review": "none"}},
}
TOKEN = "bench-api-token-0123456789"


def note(text: str) -> str:
    return text


async def skip_backlog(url: str) -> None:
    """The spans group starts at the end of each stream: the untraced block's calls are
    not the traced block's work (a real serve is traced all along)."""
    r = Redis.from_url(url)
    try:
        for s in range(keys.SHARDS):
            try:
                await r.xgroup_setid(keys.events(s), "traces", "$")
            except ResponseError:
                # No group: the untraced serve dropped it. Created here at the end, as
                # serve would create it from the start and emit every earlier call's span.
                with contextlib.suppress(ResponseError):
                    await r.xgroup_create(keys.events(s), "traces", id="$", mkstream=True)
    finally:
        await r.aclose()


async def block(url: str, traced: bool, n: int, data: Path) -> list[float]:
    """n free calls; each one's time less a direct call's, in ms."""
    if traced:
        await skip_backlog(url)
    data.mkdir(parents=True, exist_ok=True)
    (data / "policy.yaml").write_text(yaml.safe_dump(POLICY))
    async with SlackEmulator(signing_secret="bench-secret", bot_token="xoxb-bench") as emu:
        settings = Settings(
            slack_bot_token=SecretStr("xoxb-bench"),
            slack_signing_secret=SecretStr("bench-secret"),
            slack_api_url=emu.api_url,
            redis_url=SecretStr(url),
            hitl_policy=data / "policy.yaml",
            hitl_port=0,
            hitl_api_token=SecretStr(TOKEN),
            hitl_data_dir=data,
        )
        exporter = InMemorySpanExporter()
        tracer = spans.provider(BatchSpanProcessor(exporter)) if traced else None
        stop = asyncio.Event()
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            run_serve(
                settings,
                stop,
                on_ready=ready.set_result,
                options=ServeOptions(tracer_provider=tracer),
            )
        )
        api = await asyncio.wait_for(ready, 15)
        gate = Gate(api_url=api, api_token=TOKEN)
        gated = require_approval(gate, tool="note")(note_async)
        agent = TracerProvider().get_tracer("agent")
        added: list[float] = []
        try:
            for i in range(n + 20):  # the first 20 warm up
                t0 = time.perf_counter()
                if traced:
                    with agent.start_as_current_span("execute_tool note"):
                        await gated(f"n{i}")
                else:
                    await gated(f"n{i}")
                t1 = time.perf_counter()
                await note_async(f"n{i}")
                t2 = time.perf_counter()
                if i >= 20:
                    added.append(((t1 - t0) - (t2 - t1)) * 1000)
        finally:
            await gate.aclose()
            stop.set()
            await asyncio.wait_for(task, 15)
        if traced:
            print(f"  (spans exported in the traced block: {len(exporter.get_finished_spans())})")
        return added


async def note_async(text: str) -> str:
    return note(text)


async def main(n: int, blocks: int) -> int:
    print_load()
    on: list[float] = []
    off: list[float] = []
    with server_url() as url, tempfile.TemporaryDirectory() as tmp:
        r = Redis.from_url(url)
        await r.flushdb()
        await r.aclose()
        for b in range(blocks):
            for traced in (b % 2 == 0, b % 2 == 1):  # alternate which goes first
                got = await block(url, traced, n, Path(tmp) / f"{b}-{traced}")
                (on if traced else off).extend(got)
    p50_on, p50_off = statistics.median(on), statistics.median(off)
    q_on, q_off = statistics.quantiles(on, n=10)[-1], statistics.quantiles(off, n=10)[-1]
    print(
        f"free call added, traces off: p50 {p50_off:.3f} ms, p90 {q_off:.3f} ms ({len(off)} calls)"
    )
    print(f"free call added, traces on:  p50 {p50_on:.3f} ms, p90 {q_on:.3f} ms ({len(on)} calls)")
    ratio = p50_on / p50_off if p50_off > 0 else float("inf")
    limit = max(p50_off * 1.10, p50_off + 0.1)
    print(
        verdict("p50 ratio, on / off", ratio, f"<= {limit / p50_off:.2f}", p50_on <= limit, ".3f")
    )
    return 0 if p50_on <= limit else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="calls per block")
    ap.add_argument("--blocks", type=int, default=4, help="blocks of each setting")
    args: Any = ap.parse_args()
    sys.exit(asyncio.run(main(args.n, args.blocks)))
