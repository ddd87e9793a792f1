"""The worker: takes runs from the shared Redis Stream and drives each to a final state.

Runs are entries of `keys.RUN_QUEUE`, read through the consumer group
`workers`, so any number of workers share them and each entry has one owner.
An entry is acknowledged only when its run is final; until then it sits in the
owner's pending list. A live owner refreshes its entries (XCLAIM to itself)
while it waits on people; a dead one stops refreshing, and after `min_idle_ms`
another worker takes the entry over (XAUTOCLAIM) and resumes the run from
Redis. On SIGTERM a worker stops reading, lets a tool already running finish
and report, and hands its entries over at once, unacknowledged.

    python -m bot.agent.worker [--agent module:object]... [--concurrency 16] [--min-idle 10s]

`--min-idle` defaults to HITL_TAKEOVER_AFTER, else 10 s: a live worker refreshes its
entries every third of it, so a short takeover is safe and a crashed run resumes soon.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import secrets
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.agent import messages as msg
from bot.agent.errors import AgentNotFound, LostClaim
from bot.agent.llm import ChatClient
from bot.agent.loader import AgentCatalog
from bot.agent.loop import LoopConfig, RunLoop, Stores
from bot.agent.tracing import run_span
from bot.config import Settings
from bot.core.durations import parse_duration
from bot.core.models import RUN_FINAL, Run, RunState
from bot.db.failures import StoreError, is_missing_group
from bot.errors import ConfigError, HitlError, NotFound
from bot.gate.runtime import open_runtime
from bot.logs import setup as setup_logging
from bot.messages import plural
from bot.store.run.run_queue import GROUP, Row
from bot.supervise import Supervisor
from bot.telemetry.setup import provider_from_env

log = logging.getLogger(__name__)

Entry = tuple[str, str]  # (stream entry id, run id)
TAKEOVER_ENV = "HITL_TAKEOVER_AFTER"
DEFAULT_TAKEOVER = "10s"


def default_consumer() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class WorkerConfig:
    group: str = GROUP
    consumer: str = field(default_factory=default_consumer)
    concurrency: int = 16  # runs in flight at once; most of them wait on people
    min_idle_ms: int = 10_000  # an entry idle this long belongs to a dead worker
    heartbeat_ms: int | None = None  # default: a third of min_idle_ms
    block_ms: int = 1_000  # longest XREADGROUP block; also how fast a stop is noticed
    shutdown_grace_s: float = 30.0  # how long a running tool may take to finish on SIGTERM
    # A run taken over this many times keeps killing its workers (or outlives very
    # many restarts): end it as failed instead of handing it on forever.
    max_takeovers: int = 20

    @property
    def beat_s(self) -> float:
        return (self.heartbeat_ms or max(1, self.min_idle_ms // 3)) / 1000


@dataclass
class _Job:
    run_id: str
    task: asyncio.Task[None]


class Worker:
    def __init__(
        self,
        stores: Stores,
        *,
        llm: ChatClient,
        agents: AgentCatalog,
        config: WorkerConfig | None = None,
        loop_config: LoopConfig | None = None,
        tasks: Supervisor | None = None,
        tracer_provider: object = None,
    ) -> None:
        self.stores = stores
        # a TracerProvider: each run driven under a span of its own (None: untraced)
        self.tracer_provider = tracer_provider
        self.runs = stores.runs
        self.llm = llm
        self.agents = agents
        self.config = config or WorkerConfig()
        self.loop_config = loop_config or LoopConfig()
        self.tasks = tasks or Supervisor()
        self.jobs: dict[str, _Job] = {}  # by stream entry id
        self.queue = stores.store.run_queue(group=self.config.group, consumer=self.config.consumer)

    @property
    def consumer(self) -> str:
        return self.config.consumer

    async def ensure_group(self) -> None:
        await self.queue.ensure_group()

    async def run(self, stop: asyncio.Event) -> None:
        """Take and drive runs until `stop` is set, then shut down gracefully.

        The taking loop and the heartbeat run under the supervisor: an error (Redis
        down, a failed XGROUP CREATE) is logged once and they start again after a
        backoff, while the runs in flight carry on."""
        log.info("worker %s taking runs", self.consumer)
        try:
            await asyncio.gather(
                self.tasks.run("worker", lambda: self._take(stop), stop),
                self.tasks.run("worker_heartbeat", lambda: self._heartbeat(stop), stop),
            )
        finally:
            await self._shutdown()

    async def _take(self, stop: asyncio.Event) -> None:
        await self.ensure_group()
        # Again after a restart: runs whose drive ended on a store error resume at once.
        for entry_id, run_id in await self._own_pending():
            self._start(entry_id, run_id)
        while not stop.is_set():
            free = self.config.concurrency - len(self.jobs)
            if free <= 0:
                await self._wait_for_room(stop)
                continue
            try:
                entries = await self._reclaim(free)
                if len(entries) < free:
                    entries += await self._read(free - len(entries))
            except StoreError as exc:
                if not is_missing_group(exc):
                    raise
                await self.ensure_group()  # the stream was deleted under us
                continue
            for entry_id, run_id in entries:
                self._start(entry_id, run_id)

    async def _wait_for_room(self, stop: asyncio.Event) -> None:
        waiters = [j.task for j in self.jobs.values()]
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait(
                [*waiters, stopping],
                timeout=self.config.block_ms / 1000,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            stopping.cancel()

    async def _own_pending(self) -> list[Entry]:
        """Runs this consumer name held before a restart: resumed now, not after min_idle."""
        return await self._read(self.config.concurrency, history=True)

    async def _read(self, count: int, *, history: bool = False) -> list[Entry]:
        rows = await self.queue.read(count, block_ms=self.config.block_ms, history=history)
        return await self._entries(rows)

    async def _reclaim(self, count: int) -> list[Entry]:
        """Entries whose owner stopped refreshing them: a dead or stuck worker's runs."""
        found = await self._entries(
            await self.queue.reclaim(count, min_idle_ms=self.config.min_idle_ms)
        )
        delivered = await self.queue.deliveries([eid for eid, _ in found])
        kept: list[Entry] = []
        for (entry_id, run_id), times in zip(found, delivered, strict=True):
            if times > self.config.max_takeovers:
                await self._give_up(entry_id, run_id, times)
                continue
            log.info("worker %s took over run %s (entry %s)", self.consumer, run_id, entry_id)
            kept.append((entry_id, run_id))
        return kept

    async def _give_up(self, entry_id: str, run_id: str, times: int) -> None:
        log.error("run %s was taken over %d times; ending it as failed", run_id, times)
        with contextlib.suppress(NotFound):
            await self.runs.update(
                run_id, state=RunState.FAILED, error=msg.TOO_MANY_TAKEOVERS.format(times=times)
            )
        await self.queue.ack(entry_id)

    async def _entries(self, rows: Sequence[Row]) -> list[Entry]:
        out: list[Entry] = []
        for entry_id, fields in rows:
            if entry_id in self.jobs:
                continue  # ours and running; the heartbeat was merely late
            if not fields or not fields.get("run_id"):
                await self.queue.ack(entry_id)  # deleted or not a run: nothing to resume
                continue
            out.append((entry_id, fields["run_id"]))
        return out

    def _start(self, entry_id: str, run_id: str) -> None:
        task = asyncio.create_task(self._handle(entry_id, run_id), name=f"run {run_id}")
        job = self.jobs[entry_id] = _Job(run_id, task)

        def forget(_: object) -> None:
            if self.jobs.get(entry_id) is job:
                del self.jobs[entry_id]

        task.add_done_callback(forget)

    async def _handle(self, entry_id: str, run_id: str) -> None:
        try:
            with run_span(self.tracer_provider, run_id):
                run = await self._drive(run_id)
        except LostClaim as exc:
            log.warning("run %s: %s; leaving it to its new owner", run_id, exc)
            return
        except (StoreError, OSError) as exc:
            # Left unacknowledged: this or another worker resumes it after min_idle_ms.
            log.warning("run %s: store unavailable (%s); it will be resumed", run_id, exc)
            return
        except Exception as exc:  # a bug must end the run visibly, not loop it forever
            log.exception("run %s failed", run_id)
            with contextlib.suppress(Exception):
                await self.runs.update(
                    run_id, state=RunState.FAILED, error=f"{type(exc).__name__}: {exc}"
                )
            await self.queue.ack(entry_id)
            return
        if run is None or run.state in RUN_FINAL:
            await self.queue.ack(entry_id)

    async def _drive(self, run_id: str) -> Run | None:
        try:
            run = await self.runs.get(run_id)
        except NotFound:
            log.warning("run %s is gone (expired?); dropping its queue entry", run_id)
            return None
        if run.state in RUN_FINAL:
            return run
        try:
            agent = self.agents.get(run.agent)
        except AgentNotFound as exc:
            return await self.runs.update(run_id, state=RunState.FAILED, error=str(exc))
        # Registered before any of its calls reaches a person: the Edit modal checks edits
        # against these schemas (each proposal records its tool's schema again, too).
        schemas = agent.tools.schemas()
        try:  # a policy rule that reads an argument a tool lacks fails the run, loudly
            for name, schema in schemas.items():
                self.stores.policy.check_schema(name, dict(schema))
        except ConfigError as exc:
            return await self.runs.update(run_id, state=RunState.FAILED, error=str(exc))
        await self.stores.store.tools.record_all(agent.requester, schemas)
        loop = RunLoop(agent, self.llm, self.stores, self.loop_config)
        return await loop.run(run_id)

    async def _heartbeat(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            # The agents this worker offers, for a mention to start (bot/store/run/agents.py).
            await self.stores.store.agents.announce(self.agents.offered)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.beat_s)
            if not stop.is_set():
                await self.refresh()

    async def refresh(self) -> None:
        """Reset the idle time of every run in flight; drop the ones taken over meanwhile."""
        ids = list(self.jobs)
        if not ids:
            return
        mine = await self.queue.owned(ids)
        if mine:
            await self.queue.claim(mine)
        for eid in set(ids) - set(mine):
            job = self.jobs.get(eid)
            if job is not None and not job.task.done():
                log.warning("run %s was taken over by another worker; letting go", job.run_id)
                job.task.cancel()

    async def _shutdown(self) -> None:
        jobs = dict(self.jobs)
        for job in jobs.values():
            job.task.cancel()  # a tool already running finishes and reports first (the gate)
        if jobs:
            await asyncio.wait(
                [j.task for j in jobs.values()], timeout=self.config.shutdown_grace_s
            )
        with contextlib.suppress(StoreError, OSError):
            mine = await self.queue.owned(list(jobs)) if jobs else []
            if mine:
                # Marked long idle, the entries go to the next worker's XAUTOCLAIM at once.
                await self.queue.claim(mine, idle_ms=self.config.min_idle_ms)
        n = len(jobs)
        log.info("worker %s stopped; %d %s handed over", self.consumer, n, plural(n, "run"))


async def serve(
    *,
    settings: Settings | None = None,
    agents: Sequence[str] = (),
    config: WorkerConfig | None = None,
    loop_config: LoopConfig | None = None,
) -> None:
    """Run one worker process until SIGTERM or SIGINT."""
    settings = settings or Settings.load()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    llm = ChatClient.from_settings(settings)  # before connecting: a missing model fails fast
    tracer = provider_from_env(os.environ)  # None unless OTEL_* asks for traces
    try:
        async with llm, open_runtime(settings) as rt:
            worker = Worker(
                Stores.of(rt),
                llm=llm,
                agents=AgentCatalog(agents),
                config=config,
                loop_config=loop_config,
                tracer_provider=tracer,
            )
            await worker.run(stop)
    finally:
        if tracer is not None:
            tracer.shutdown()  # flushes the run spans the batch still holds


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m bot.agent.worker", description=__doc__.split("\n")[0]
    )
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="MODULE:OBJECT",
        help="an agent this worker may run besides claw and refunds (repeatable)",
    )
    p.add_argument("--concurrency", type=int, default=16)
    takeover = os.environ.get(TAKEOVER_ENV) or DEFAULT_TAKEOVER
    p.add_argument(
        "--min-idle",
        default=takeover,
        help=f"take over a crashed worker's runs idle this long ({TAKEOVER_ENV}, else 10s)",
    )
    p.add_argument("--consumer", default=None, help="consumer name (default host-pid-random)")
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--compact-after-chars", type=int, default=24_000)
    p.add_argument("--ask-timeout", default="30m")
    a = p.parse_args(argv)
    setup_logging()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per model call is noise
    config = WorkerConfig(
        consumer=a.consumer or default_consumer(),
        concurrency=a.concurrency,
        min_idle_ms=parse_duration(a.min_idle),
    )
    loop_config = LoopConfig(
        max_turns=a.max_turns,
        compact_after_chars=a.compact_after_chars,
        ask_timeout_ms=parse_duration(a.ask_timeout),
    )
    try:
        asyncio.run(serve(agents=a.agent, config=config, loop_config=loop_config))
    except HitlError as exc:  # a missing setting or an unreachable store: say how to fix it
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
