"""Long-lived background tasks that restart after an error, and say so.

    tasks = Supervisor()
    tasks.start("sweeper", lambda: sweeper.run(stop), stop)   # an asyncio.Task
    tasks.down()            # [], or [Down("task:sweeper", "... failing for 7 s ...")]
    tasks.metrics()         # hitl_task_restarts_total{task="sweeper"} 3, hitl_task_up ...

A task that raises is logged in ONE line (its name, the error, the next delay),
with a traceback only the first time that error is seen (or at DEBUG), and
started again after a capped, jittered backoff. Without this an exception at
start (a failed XGROUP CREATE, say) ended the notifier for good and surfaced
only at shutdown as "Task exception was never retrieved"; and a loop that
logged and retried on its own wrote a traceback four times a second while
Redis was down.

A task is *failing* from its first error until an attempt has run `settle_s`
without one; the backoff starts over then. `/healthz` turns unhealthy once a
task has been failing for `grace_s`, so a single blip is not an outage.
`stop` ends every task: the backoff wait is cut short by it, and each task's
own loop is expected to return once it is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot import messages as msg
from bot.health import Down

log = logging.getLogger(__name__)

Factory = Callable[[], Awaitable[None]]
SEEN_MAX = 32  # distinct errors remembered per task (for "traceback only the first time")


@dataclass(frozen=True)
class Backoff:
    """Delays between failed attempts: first * 2**n, capped, each scaled by a random
    factor in [1 - jitter, 1] so that many processes failing together do not retry in step."""

    first_s: float = 1.0
    cap_s: float = 30.0
    jitter: float = 0.5

    def delay(self, failures: int) -> float:
        base = min(self.cap_s, self.first_s * 2 ** max(0, failures - 1))
        return float(base * (1 - self.jitter * random.random()))


TASK_BACKOFF = Backoff(first_s=0.2, cap_s=10.0)


@dataclass
class TaskStatus:
    name: str
    restarts: int = 0  # since the process started
    failures: int = 0  # in the current failing stretch; 0 while healthy
    failing_since: float | None = None  # monotonic seconds; None while healthy
    last_error: str = ""

    @property
    def up(self) -> bool:
        return self.failing_since is None


def describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class Supervisor:
    def __init__(
        self,
        *,
        backoff: Backoff = TASK_BACKOFF,
        grace_s: float = 5.0,
        settle_s: float = 5.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backoff = backoff
        self.grace_s = grace_s
        self.settle_s = settle_s
        self.now = now
        self.tasks: dict[str, TaskStatus] = {}
        self._active: set[str] = set()
        self._seen: dict[str, list[str]] = {}

    def start(self, name: str, factory: Factory, stop: asyncio.Event) -> asyncio.Task[None]:
        """`run` in a task of its own; the task shows in `metrics()` from now on."""
        status = self._enlist(name)
        return asyncio.create_task(self._supervise(status, factory, stop), name=name)

    async def run(self, name: str, factory: Factory, stop: asyncio.Event) -> None:
        """Run `factory()` again and again until `stop` is set; never raises its errors."""
        await self._supervise(self._enlist(name), factory, stop)

    def _enlist(self, name: str) -> TaskStatus:
        if name in self._active:
            raise ValueError(f"a task named {name!r} is already supervised")
        self._active.add(name)
        return self.tasks.setdefault(name, TaskStatus(name))

    async def _supervise(self, status: TaskStatus, factory: Factory, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    await self._attempt(status, factory)
                    if stop.is_set():
                        return
                    error: Exception = RuntimeError(msg.TASK_ENDED)
                except Exception as exc:  # anything a task raises: log it once, start again
                    error = exc
                if stop.is_set():
                    log.warning("task %s failed while stopping: %s", status.name, describe(error))
                    return
                delay = self._failed(status, error)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
        finally:
            self._active.discard(status.name)

    async def _attempt(self, status: TaskStatus, factory: Factory) -> None:
        attempt = asyncio.ensure_future(factory())
        try:
            if status.failing_since is not None:
                # Failing until this attempt has lasted settle_s without an error.
                done, _ = await asyncio.wait({attempt}, timeout=self.settle_s)
                if not done:
                    self._recovered(status)
            await attempt
        finally:
            if not attempt.done():  # cancelled from outside: take the attempt with us
                attempt.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await attempt

    def _failed(self, status: TaskStatus, exc: Exception) -> float:
        now = self.now()
        if status.failing_since is None:
            status.failing_since = now
        status.failures += 1
        status.restarts += 1
        status.last_error = describe(exc)
        delay = self.backoff.delay(status.failures)
        seen = self._seen.setdefault(status.name, [])
        first = status.last_error not in seen
        if first:
            seen.append(status.last_error)
            del seen[:-SEEN_MAX]
        log.warning(
            "task %s failed (%s); restarting in %.1f s",
            status.name,
            status.last_error,
            delay,
            exc_info=exc if first or log.isEnabledFor(logging.DEBUG) else None,
            extra={"task": status.name, "reason": status.last_error, "failures": status.failures},
        )
        return delay

    def _recovered(self, status: TaskStatus) -> None:
        log.info(
            "task %s recovered after %d failures",
            status.name,
            status.failures,
            extra={"task": status.name, "failures": status.failures},
        )
        status.failing_since = None
        status.failures = 0

    def down(self) -> list[Down]:
        """The tasks failing for `grace_s` or more, for /healthz; their errors are in the
        log (one line per failure), never here."""
        now = self.now()
        return [
            Down(
                f"task:{s.name}",
                msg.TASK_DOWN.format(
                    task=s.name, seconds=int(now - s.failing_since), failures=s.failures
                ),
            )
            for s in self.tasks.values()
            if s.failing_since is not None and now - s.failing_since >= self.grace_s
        ]

    def metrics(self) -> str:
        """This process's task counters in Prometheus text (appended to /metrics)."""
        lines = [
            "# HELP hitl_task_restarts_total Background task restarts after an error, "
            "in this process.",
            "# TYPE hitl_task_restarts_total counter",
            *(f'hitl_task_restarts_total{{task="{s.name}"}} {s.restarts}' for s in self._sorted()),
            "# HELP hitl_task_up 1 while a background task runs without failing, else 0.",
            "# TYPE hitl_task_up gauge",
            *(f'hitl_task_up{{task="{s.name}"}} {int(s.up)}' for s in self._sorted()),
        ]
        return "\n".join(lines) + "\n"

    def _sorted(self) -> list[TaskStatus]:
        return [self.tasks[name] for name in sorted(self.tasks)]
