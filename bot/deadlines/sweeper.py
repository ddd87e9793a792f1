"""Fires due timeouts through the same atomic scripts as every other transition.

Any number of sweepers may run: each timer is fenced by the version it was
armed at, so of two sweepers firing the same timer the second is a no-op.
Shards are swept concurrently, each batch in one pipeline, and the clock is
read again for every batch so a long backlog never hides newly due timers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.clock import Clock
from bot.gate.decide import expire_due
from bot.store import keys
from bot.store.due import DueTimers
from bot.store.requests import Moved, RequestStore
from bot.store.run.questions import QuestionStore

OnFired = Callable[[Moved], Awaitable[None]]


@dataclass
class SweepStats:
    fired: int = 0
    noops: int = 0


class Sweeper:
    def __init__(
        self,
        requests: RequestStore,
        questions: QuestionStore,
        *,
        clock: Clock,
        batch: int = 500,
        on_fired: OnFired | None = None,
    ) -> None:
        self.requests = requests
        self.questions = questions
        self.timers = DueTimers.beside(requests)
        self.clock = clock
        self.batch = batch
        self.on_fired = on_fired

    async def sweep_once(self) -> SweepStats:
        """Fire every timer due now; returns how many fired and how many were stale."""
        stats = SweepStats()
        await asyncio.gather(*(self._shard(s, stats) for s in range(keys.SHARDS)))
        return stats

    async def _shard(self, shard: int, stats: SweepStats) -> None:
        left = 0  # timers kept for serve's sweeper (defaults, without the key): read past them
        while True:
            due = await self.timers.due(shard, self.clock(), start=left, count=self.batch)
            if not due:
                return
            left += await self._fire(shard, due, stats)
            if len(due) < self.batch:
                return

    async def _fire(self, shard: int, due: list[str], stats: SweepStats) -> int:
        """Fire one batch; how many timers it left in place for a sweeper with the key."""
        timers = [keys.parse_due_member(m) for m in due]
        reqs = [
            (m, item, v)
            for m, (kind, item, v) in zip(due, timers, strict=True)
            if kind == keys.DUE_REQUEST
        ]
        stale: list[str] = []
        for member, item, version in [
            (m, i, v) for m, (k, i, v) in zip(due, timers, strict=True) if k == keys.DUE_QUESTION
        ]:
            if await self.questions.timeout(item, fence=version):
                stats.fired += 1
            else:
                stats.noops += 1
                stale.append(member)
        results = await expire_due(self.requests, [(item, v) for _, item, v in reqs])
        left = 0
        for (member, _, _), moved in zip(reqs, results, strict=True):
            if moved is not None and moved.left:
                left += 1  # a policy default: only a store that can sign it applies it
                continue
            if moved is None or moved.noop:
                # Another sweeper won, or the request moved on: drop the stale timer.
                stats.noops += 1
                stale.append(member)
                continue
            stats.fired += 1
            if self.on_fired is not None:
                await self.on_fired(moved)
        await self.timers.drop(shard, stale)
        return left

    async def run(self, stop: asyncio.Event, interval_s: float = 0.25) -> None:
        """Sweep until `stop` is set. A failed sweep raises: run it under a Supervisor
        (bot/supervise.py), which logs one line and retries with backoff, rather than
        logging a traceback every `interval_s` while Redis is down."""
        while not stop.is_set():
            await self.sweep_once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)
