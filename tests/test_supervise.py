"""The supervisor on its own: restarts with backoff, one line per failure, health, stop."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import pytest

from bot.health import Down
from bot.supervise import Backoff, Supervisor
from tests.support.poll import eventually

FAST = Backoff(first_s=0.01, cap_s=0.05)


def failure_lines(caplog: pytest.LogCaptureFixture, task: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if getattr(r, "task", None) == task and r.levelno >= logging.WARNING
    ]


async def test_a_failing_task_restarts_with_one_line_per_failure_and_one_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    tasks = Supervisor(backoff=FAST, grace_s=60, settle_s=0.05)
    stop = asyncio.Event()
    attempts = 0
    running = asyncio.Event()

    async def flaky() -> None:
        nonlocal attempts
        attempts += 1
        if attempts <= 3:
            raise ConnectionError("Redis went away\nsecond line of a long message")
        running.set()
        await stop.wait()

    task = tasks.start("flaky", flaky, stop)
    await asyncio.wait_for(running.wait(), 10)
    stop.set()
    await asyncio.wait_for(task, 10)

    lines = failure_lines(caplog, "flaky")
    assert len(lines) == 3
    assert all("flaky" in r.getMessage() for r in lines)
    assert all("ConnectionError: Redis went away" in r.getMessage() for r in lines)
    assert all("second line" not in r.getMessage() for r in lines)
    assert [r.exc_info is not None for r in lines] == [True, False, False]
    assert tasks.tasks["flaky"].restarts == 3
    assert 'hitl_task_restarts_total{task="flaky"} 3' in tasks.metrics()


async def test_a_new_error_gets_its_traceback_too(caplog: pytest.LogCaptureFixture) -> None:
    tasks = Supervisor(backoff=FAST, grace_s=60)
    stop = asyncio.Event()
    errors: list[Exception] = [KeyError("a"), KeyError("a"), ValueError("b")]

    async def failing() -> None:
        if errors:
            raise errors.pop(0)
        await stop.wait()

    task = tasks.start("t", failing, stop)

    async def all_failed() -> bool:
        return tasks.tasks["t"].restarts == 3

    await eventually(all_failed)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert [r.exc_info is not None for r in failure_lines(caplog, "t")] == [True, False, True]


async def test_health_names_a_task_failing_past_the_grace_and_clears_once_it_settles() -> None:
    tasks = Supervisor(backoff=FAST, grace_s=0.2, settle_s=0.2)
    stop = asyncio.Event()
    broken = True

    async def until_fixed() -> None:
        if broken:
            raise RuntimeError("WRONGTYPE Operation against a key holding the wrong kind")
        await stop.wait()

    task = tasks.start("notifier", until_fixed, stop)
    try:
        assert tasks.down() == []  # one failure is not an outage yet

        async def down() -> list[Down] | None:
            return tasks.down() or None

        found = await eventually(down)
        assert [d.part for d in found] == ["task:notifier"]
        # The error is the log's: /healthz, which answers anyone, never repeats it.
        assert "notifier" in found[0].detail and "WRONGTYPE" not in found[0].detail
        assert 'hitl_task_up{task="notifier"} 0' in tasks.metrics()
        broken = False

        async def healthy() -> bool:
            return tasks.down() == [] and tasks.tasks["notifier"].up

        await eventually(healthy)
        assert 'hitl_task_up{task="notifier"} 1' in tasks.metrics()
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


@dataclass(frozen=True)
class Recorded(Backoff):
    given: list[float] = field(default_factory=list)

    def delay(self, failures: int) -> float:
        self.given.append(super().delay(failures))
        return self.given[-1]


async def test_backoff_doubles_to_its_cap_and_starts_over_after_a_healthy_stretch() -> None:
    backoff = Recorded(first_s=0.01, cap_s=0.04, jitter=0)
    tasks = Supervisor(backoff=backoff, settle_s=0.1)
    delays = backoff.given
    stop = asyncio.Event()
    script = ["fail"] * 5 + ["settle"] + ["fail"]

    async def scripted() -> None:
        step = script.pop(0) if script else "run"
        if step == "fail":
            raise OSError("down")
        if step == "settle":  # healthy until the supervisor counts it recovered, then fails
            await eventually(lambda: tasks.tasks["t"].failures == 0, what="the task recovered")
            raise OSError("down again")
        await stop.wait()

    task = tasks.start("t", scripted, stop)

    async def done() -> bool:
        return len(delays) == 7

    await eventually(done)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert delays == [0.01, 0.02, 0.04, 0.04, 0.04, 0.01, 0.02]


async def test_stop_ends_a_task_waiting_out_a_long_backoff() -> None:
    tasks = Supervisor(backoff=Backoff(first_s=600, cap_s=600))
    stop = asyncio.Event()

    async def fails() -> None:
        raise OSError("down")

    task = tasks.start("t", fails, stop)

    async def failed() -> bool:
        return tasks.tasks["t"].restarts == 1

    await eventually(failed)
    stop.set()
    await asyncio.wait_for(task, 5)  # not the ten minutes of the backoff


async def test_cancelling_the_supervisor_cancels_the_task_it_runs() -> None:
    tasks = Supervisor()
    stop = asyncio.Event()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    task = tasks.start("t", forever, stop)
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_one_name_is_supervised_once() -> None:
    tasks = Supervisor()
    stop = asyncio.Event()
    first = tasks.start("sweeper", stop.wait, stop)
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="sweeper"):
        await tasks.run("sweeper", stop.wait, stop)
    stop.set()
    await asyncio.wait_for(first, 5)
