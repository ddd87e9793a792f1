"""Does each fast path pay for itself? Each one against the plain path it shortcuts.

Three shortcuts, each timed beside its plain twin in the same run, against the same
Valkey, alternating one call of each (the order swapped every other pair) so both see
the same machine:

  create-and-claim   `RequestStore.create(claim_as=...)`: a `review: none` call created
                     already claimed, one script; plain: `create`, then a claim
                     transition (two scripts, two round trips)
  api/fastpath       `POST /v1/approvals` answered by the route that skips FastAPI's
                     routing and dependency solving; plain: the same app without that
                     route (FastAPI's own route answers). Real uvicorn on loopback, a raw
                     keep-alive HTTP/1.1 client, both in this process
  core/fastschema    a free call through the SDK (`require_approval`, direct mode) whose
                     arguments pass the quick predicate; plain: every check by jsonschema
                     (the predicate switched off when the schema is compiled). Also the
                     check alone, for scale

A fourth, api/fastjson (orjson for request bodies), was measured here and removed: it
saved 1-2 % of a POST and cost 12 % with a 15 KB body (docs/performance.md).

Two controls time one path against itself (a fast route against itself; two SDK gates
alike): their "saving" is what this bench calls zero, a bias or noise floor.

For each it prints the median time of the plain path and of the fast one, the saving as
a share of the plain path's time, its spread over blocks of pairs, and KEEP (saves at
least a tenth) or REMOVE. Starts its own Valkey unless REDIS_URL is set (that database is
FLUSHED). Prints figures; not a test. The machine is shared: run it more than once.

    .venv/bin/python bench/fast_paths.py [--n 2000] [--block 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from _common import REFUND, print_load, server_url
from api_throughput import TOKEN, RawClient
from pydantic import SecretStr
from redis.asyncio import Redis

import bot.api.fastpath as fastpath
import bot.core.args.schema as schema
from bot.api import create_app
from bot.asgi import serve_asgi
from bot.clock import wall_ms
from bot.config import Settings
from bot.core.models import Decision
from bot.core.policy import DEFAULT_POLICY, parse_policy
from bot.core.states import Event
from bot.gate.runtime import Runtime
from bot.sdk import Gate, require_approval
from bot.sdk.schema import derive
from bot.store.requests import RequestStore

SHARE = 0.10  # a fast path must save at least this share of its path's time
LEVEL = {"review_timeout": "4h", "reviewers": {"channels": ["#hitl-approvals"]}, "approvers": ["*"]}
FREE = parse_policy(
    {
        "tiers": {t: LEVEL for t in ("low", "medium", "high", "critical")},
        "tools": {"refund": {"tier": "low", "review": "none"}},
    }
)
Op = Callable[[], Awaitable[object]]


@dataclass
class Pair:
    name: str
    path: str  # what the plain side times
    fast: Op
    plain: Op


async def timed(op: Op) -> float:
    t0 = time.perf_counter()
    await op()
    return time.perf_counter() - t0


async def compare(p: Pair, n: int, block: int) -> tuple[float, float, list[float]]:
    """Median seconds (plain, fast) over n alternating pairs; the saving per block."""
    for _ in range(max(20, n // 20)):  # connections, scripts, caches
        await p.fast()
        await p.plain()
    fast: list[float] = []
    plain: list[float] = []
    for i in range(n):
        if i % 2:
            fast.append(await timed(p.fast))
            plain.append(await timed(p.plain))
        else:
            plain.append(await timed(p.plain))
            fast.append(await timed(p.fast))
    blocks = [
        1 - statistics.median(fast[b : b + block]) / statistics.median(plain[b : b + block])
        for b in range(0, n, block)
    ]
    return statistics.median(plain), statistics.median(fast), blocks


@contextmanager
def swapped(module: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def runtime(redis: Redis) -> Runtime:
    settings = Settings(hitl_api_token=SecretStr(TOKEN), redis_url=SecretStr("redis://unused"))
    return Runtime(
        settings=settings, redis=redis, server=None, policy=DEFAULT_POLICY, clock=wall_ms
    )


def without_fastpath(rt: Runtime) -> Any:
    """The app as create_app builds it, less the fast route."""
    app = create_app(rt)
    routes = app.router.routes
    routes[:] = [r for r in routes if not isinstance(r, fastpath._Route)]
    return app


async def store_pairs(redis: Redis) -> list[Pair]:
    store = RequestStore(redis)
    call: dict[str, Any] = {"tool": "refund", "args": REFUND, "requester": "U0AGENT"}

    async def fast() -> None:
        made = await store.create(FREE, **call, claim_as="worker-1")
        assert made.claimed

    async def plain() -> None:
        made = await store.create(FREE, **call)
        claim = Decision(event=Event.CLAIM, actor="worker-1")
        await store.transition(made.request.id, claim)

    return [Pair("create-and-claim", "create, then claim", fast, plain)]


async def api_pairs(redis: Redis) -> tuple[list[Pair], list[Any]]:
    rt = runtime(redis)
    served = [
        await serve_asgi(create_app(rt)),
        await serve_asgi(without_fastpath(rt)),
    ]
    clients = [RawClient("127.0.0.1", int(s.url.rsplit(":", 1)[1])) for s in served]
    body = json.dumps({"tool": "refund", "args": REFUND}).encode()

    def post(c: RawClient) -> Op:
        async def op() -> None:
            if (status := await c.post(body)) != 201:
                raise RuntimeError(f"POST /v1/approvals answered {status}")

        return op

    pairs = [
        Pair("(control: A against A)", "POST /v1/approvals, fast route", *[post(clients[0])] * 2),
        Pair("api/fastpath", "POST /v1/approvals", post(clients[0]), post(clients[1])),
    ]
    return pairs, [*clients, *served]


async def refund(amount: float, currency: str, customer_id: str, order_id: str, reason: str) -> str:
    return order_id


async def sdk_pairs(url: str) -> tuple[list[Pair], list[Gate]]:
    gates = [
        Gate(settings=Settings(redis_url=SecretStr(url)), policy=FREE, requester="agent-7")
        for _ in range(3)
    ]
    quick, slow, twin = (require_approval(g, tool="refund")(refund) for g in gates)
    with swapped(schema, "quick_check", lambda s: None):
        await slow(**REFUND)  # compiles its schemas (decorator and store) without the predicate
    await quick(**REFUND)
    await twin(**REFUND)

    derived = derive("refund", refund, ())  # the schema the decorator checks with
    if derived is None:
        raise RuntimeError("no schema derived from refund's signature")
    with_quick = schema.compiled(derived)
    without = schema.Compiled(with_quick.validator, None)
    if with_quick.quick is None:
        raise RuntimeError("the quick predicate did not compile")

    async def check(c: schema.Compiled) -> None:
        if schema.fit_problems(c, dict(REFUND)):
            raise RuntimeError("REFUND does not fit its own schema")

    pairs = [
        Pair(
            "(control: A against A)",
            "SDK free call",
            lambda: quick(**REFUND),
            lambda: twin(**REFUND),
        ),
        Pair("core/fastschema", "SDK free call", lambda: quick(**REFUND), lambda: slow(**REFUND)),
        Pair(
            "  (the check alone)", "fit_problems", lambda: check(with_quick), lambda: check(without)
        ),
    ]
    return pairs, gates


def row(name: str, path: str, plain: float, fast: float, blocks: list[float], judged: bool) -> str:
    saving = 1 - fast / plain
    word = ("KEEP" if saving >= SHARE else "REMOVE") if judged else "(scale)"
    spread = f"{min(blocks):+.1%} .. {max(blocks):+.1%}"
    return (
        f"{name:<30} {path:<34} {plain * 1e6:>9.1f} {fast * 1e6:>9.1f} "
        f"{saving:>+8.1%}  {spread:<18} {word}"
    )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="alternating pairs per comparison")
    ap.add_argument("--block", type=int, default=200, help="pairs per block, for the spread")
    a = ap.parse_args()
    logging.disable(logging.WARNING)  # the gates' start-up advice (no serve, no AOF)
    print_load()
    with server_url() as url:
        redis = Redis.from_url(url, decode_responses=True)
        await redis.flushdb()
        pairs = await store_pairs(redis)
        api, opened = await api_pairs(redis)
        sdk, gates = await sdk_pairs(url)
        pairs += api + sdk
        print(
            f"{'fast path':<30} {'plain path':<34} {'plain µs':>9} {'fast µs':>9} "
            f"{'saving':>8}  {'per block':<18} verdict (keep at >= {SHARE:.0%})"
        )
        try:
            for p in pairs:
                for c in opened:  # uvicorn closed those idle for 5 s
                    if isinstance(c, RawClient):
                        await c.reconnect()
                plain, fast, blocks = await compare(p, a.n, a.block)
                judged = not p.name.startswith((" ", "("))
                print(row(p.name, p.path, plain, fast, blocks, judged), flush=True)
        finally:
            for g in gates:
                await g.aclose()
            for c in opened:
                await (c.aclose() if isinstance(c, RawClient) else c.stop())
            await redis.flushdb()
            await redis.aclose()


if __name__ == "__main__":
    asyncio.run(main())
