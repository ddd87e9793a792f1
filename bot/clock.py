"""Time and ids, injectable: every part takes a `Clock` instead of reading the time."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

Clock = Callable[[], int]  # epoch milliseconds
IdFactory = Callable[[], str]


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def new_id() -> str:
    """64 random bits as 16 hex digits: short enough to type in `/hitl audit <id>`."""
    return secrets.token_hex(8)


class FakeClock:
    """A clock that only moves when told to, so hours of escalation take milliseconds."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now
