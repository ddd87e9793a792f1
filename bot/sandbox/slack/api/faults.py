"""Fault switches, slow answers and the Web API call log.

A test arms a fault ("the next 2 calls of chat.postMessage answer 429 with Retry-After: 1")
and later reads the log ("chat.postMessage was called 3 times, 1 succeeded") to prove that
a retry delivered the message exactly once.

A delay is the other way Slack fails a client: the call takes effect at once (the message
is in the channel) but the answer comes late, so a client that dies or times out meanwhile
never learns the message's ts.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Fault:
    status: int
    remaining: int
    retry_after: int | None = None
    method: str | None = None  # None: any method

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Delay:
    seconds: float
    remaining: int
    method: str | None = None  # None: any method

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Faults:
    def __init__(self) -> None:
        self.pending: list[Fault] = []
        # A steady share of failing calls (a flaky Slack), beside the counted faults above.
        self.rate = 0.0
        self.rate_statuses: tuple[int, ...] = (429, 500)
        self._random = random.Random(0)
        self.delays: list[Delay] = []
        self.held = 0  # answers being held back right now
        self._release = asyncio.Event()

    def set_rate(self, rate: float, statuses: tuple[int, ...] = (429, 500), seed: int = 0) -> None:
        """From now on, each call fails with probability `rate`, with one of `statuses`."""
        if not 0.0 <= rate <= 1.0 or not statuses:
            raise ValueError("rate must be within [0, 1], with at least one status")
        self.rate, self.rate_statuses = rate, statuses
        self._random = random.Random(seed)

    def add(
        self, status: int, count: int = 1, retry_after: int | None = None, method: str | None = None
    ) -> Fault:
        if status == 429 and retry_after is None:
            retry_after = 1
        fault = Fault(status, count, retry_after, method)
        if count > 0:
            self.pending.append(fault)
        return fault

    def add_delay(self, seconds: float, count: int = 1, method: str | None = None) -> Delay:
        delay = Delay(seconds, count, method)
        if count > 0 and seconds > 0:
            self.delays.append(delay)
        return delay

    def clear(self) -> None:
        """Disarm everything and let every held answer go now."""
        self.pending.clear()
        self.rate = 0.0
        self.delays.clear()
        self._release.set()
        self._release = asyncio.Event()

    async def hold(self, method: str) -> None:
        """Hold this call's answer back if a delay is armed for it (until cleared)."""
        delay = next((d for d in self.delays if d.method in (None, method)), None)
        if delay is None:
            return
        delay.remaining -= 1
        if delay.remaining <= 0:
            self.delays.remove(delay)
        self.held += 1
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), delay.seconds)
        finally:
            self.held -= 1

    def take(self, method: str) -> Fault | None:
        """The fault this call should suffer, if any (using one of its count)."""
        for fault in self.pending:
            if fault.method in (None, method):
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self.pending.remove(fault)
                return fault
        if self.rate and self._random.random() < self.rate:
            status = self._random.choice(self.rate_statuses)
            return Fault(status, 0, 1 if status == 429 else None, method)
        return None


@dataclass
class Call:
    method: str
    http_status: int
    ok: bool
    error: str | None
    at: float
    args: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class CallLog:
    """Every Web API call, faulted or not, in order."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.counts: Counter[str] = Counter()

    def record(self, call: Call) -> None:
        self.calls.append(call)
        self.counts[call.method] += 1

    def count(self, method: str, *, ok: bool | None = None) -> int:
        if ok is None:
            return self.counts[method]
        return sum(1 for c in self.calls if c.method == method and c.ok == ok)

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def clear(self) -> None:
        self.calls.clear()
        self.counts.clear()

    def to_json(self) -> dict[str, Any]:
        ok_counts = Counter(c.method for c in self.calls if c.ok)
        return {
            "counts": dict(self.counts),
            "ok_counts": dict(ok_counts),
            "log": [c.to_json() for c in self.calls],
        }
