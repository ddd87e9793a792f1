"""Fires due timeouts through the same atomic scripts as every other transition.

Any number of sweepers may run: each timer is fenced by the version it was
armed at, so of two sweepers firing the same timer the second is a no-op.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.clock import Clock
from bot.core.models import Decision
from bot.core.states import Event
from bot.errors import HitlError
from bot.store import keys
from bot.store.questions import QuestionStore
from bot.store.requests import Moved, RequestStore

log = logging.getLogger(__name__)

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
        concurrency: int = 32,
        on_fired: OnFired | None = None,
    ) -> None:
        self.requests = requests
        self.questions = questions
        self.redis = requests.redis
        self.clock = clock
        self.batch = batch
        self.on_fired = on_fired
        self._gate = asyncio.Semaphore(concurrency)

    async def sweep_once(self) -> SweepStats:
        """Fire every timer due now; returns how many fired and how many were stale."""
        stats = SweepStats()
        now = self.clock()
        for shard in range(keys.SHARDS):
            while True:
                due: list[str] = await self.redis.zrangebyscore(  # type: ignore[assignment]
                    keys.due(shard), "-inf", now, start=0, num=self.batch
                )
                if not due:
                    break
                results = await asyncio.gather(*(self._fire(m) for m in due))
                stats.fired += sum(results)
                stats.noops += len(results) - sum(results)
                if len(due) < self.batch:
                    break
        return stats

    async def _fire(self, member: str) -> bool:
        kind, item_id, version = keys.parse_due_member(member)
        async with self._gate:
            try:
                if kind == "q":
                    return await self.questions.timeout(item_id, fence=version)
                moved = await self.requests.transition(
                    item_id, Decision(event=Event.TIMEOUT, fence=version)
                )
            except HitlError as exc:
                log.warning("timer %s could not fire: %s", member, exc)
                return False
            if moved.noop:
                # Another sweeper won, or the request moved on; drop the stale timer.
                await self.redis.zrem(keys.due(keys.shard_of(item_id)), member)
                return False
            if self.on_fired is not None:
                await self.on_fired(moved)
            return True

    async def run(self, stop: asyncio.Event, interval_s: float = 0.25) -> None:
        """Sweep until `stop` is set; a failing sweep is logged and retried, never fatal."""
        while not stop.is_set():
            try:
                await self.sweep_once()
            except Exception:  # a Redis blip must not kill the only thing that ends requests
                log.exception("sweep failed; retrying")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)
