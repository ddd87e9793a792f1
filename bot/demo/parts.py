"""The demo's plumbing: starting each part, stopping it, logging, and counting the store."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from bot.config import Settings
from bot.demo import messages as say
from bot.gate.runtime import Runtime
from bot.logs import JsonFormatter
from bot.sandbox.slack import SlackEmulator
from bot.server.serve import ServeOptions, run_serve
from bot.supervise import Supervisor

HOST = "127.0.0.1"  # the emulator lets anyone act as anyone: never on a public address
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 30.0  # the worker's grace for a running tool, plus the bot's own stop


@dataclass(frozen=True)
class Found:
    runs: int
    unfinished: int
    requests: int


async def count_store(rt: Runtime) -> Found:
    """How many runs and requests the store holds (the run indexes count the runs)."""
    runs, unfinished = await rt.runs.counts()
    return Found(runs, unfinished, await rt.requests.count())


@contextlib.contextmanager
def demo_logging(path: Path) -> Iterator[None]:
    """Everything to a log file in the data dir; only errors to the terminal.

    The terminal holds the instructions; a warning nobody can act on (a Slack
    retry for a thread the emulator forgot at restart) must not bury them.
    """
    root = logging.getLogger()
    to_file = logging.FileHandler(path, encoding="utf-8")
    to_file.setLevel(logging.INFO)
    to_file.setFormatter(JsonFormatter())  # one JSON object a line, as every command writes
    to_term = logging.StreamHandler()
    to_term.setLevel(logging.ERROR)
    to_term.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    chatty = logging.getLogger("httpx")  # a line per model and Slack call drowns the rest
    before = root.level, chatty.level
    root.setLevel(logging.INFO)
    chatty.setLevel(logging.WARNING)
    root.addHandler(to_file)
    root.addHandler(to_term)
    try:
        yield
    finally:
        root.removeHandler(to_file)
        root.removeHandler(to_term)
        to_file.close()
        root.setLevel(before[0])
        chatty.setLevel(before[1])


async def start_emulator(
    secret: str, token: str, port: int, out: Console, *, app_token: str | None = None
) -> SlackEmulator:
    """The emulator on `port`, or on a free port (said so) when `port` cannot be had;
    speaking Socket Mode when given an `app_token`."""
    emu = SlackEmulator(signing_secret=secret, bot_token=token, app_token=app_token)
    try:
        await emu.start(HOST, port)
        return emu
    except OSError as exc:
        await emu.stop()
        if port == 0:
            raise
        problem = errno.errorcode.get(exc.errno or 0, str(exc))
    # A failed start leaves the emulator holding its unstarted server: use a fresh one.
    emu = SlackEmulator(signing_secret=secret, bot_token=token, app_token=app_token)
    await emu.start(HOST, 0)
    got = emu.base_url.rsplit(":", 1)[1]
    out.print(say.PORT_TAKEN.format(port=port, error=problem, got=got), soft_wrap=True)
    return emu


async def start_bot(
    settings: Settings, stop: asyncio.Event, agent: str, tasks: Supervisor | None = None
) -> tuple[str, asyncio.Task[None]]:
    """run_serve in a task; its URL once it listens. Raises why it could not start."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_ready(url: str) -> None:
        if not ready.done():
            ready.set_result(url)

    task = asyncio.create_task(
        run_serve(
            settings,
            stop,
            options=ServeOptions(default_agent=agent),
            on_ready=on_ready,
            tasks=tasks,
        ),
        name="bot",
    )
    waits: list[asyncio.Future[Any]] = [ready, task]
    await asyncio.wait(waits, timeout=START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    if ready.done():
        return ready.result(), task
    if task.done():
        task.result()  # raises why the bot could not start
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise TimeoutError(f"the bot did not start within {START_TIMEOUT_S:g} s")


async def stop_task(stop: asyncio.Event, task: asyncio.Task[None]) -> None:
    """Set `stop` and let `task` wind down; cancel it if it will not."""
    stop.set()
    done, _ = await asyncio.wait([task], timeout=STOP_TIMEOUT_S)
    if not done:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task  # an error was already raised by supervise(), or is moot while stopping


async def supervise(stop: asyncio.Event, *tasks: asyncio.Task[None]) -> None:
    """Wait for a stop, or for a part to end on its own (a crash); then stop them all and
    raise the first error."""
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        stop.set()
    # Bounded: a part that will not stop is cancelled by stop_task() afterwards.
    done, _ = await asyncio.wait(tasks, timeout=STOP_TIMEOUT_S)
    for task in tasks:
        error = None if task not in done or task.cancelled() else task.exception()
        if error is not None:
            raise error
