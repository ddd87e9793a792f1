"""Keeping the shared embedded Valkey up while hitl-bot processes use it, and no longer.

Every runtime that uses the embedded server (serve, worker, demo, the SDK's
direct mode, a CLI command) holds an `EmbeddedWatch`:

- **Registered.** It keeps one connection open named `hitl-user:<pid>:<token>`.
  The server's own client list is the list of users, and the kernel closes a
  killed process's connection, so a `kill -9`'d worker or SDK script stops
  counting at once without anyone cleaning up. (Not pid checks: processes in
  two containers sharing the data dir see different pid namespaces; not a
  counter: a killed process never decrements it.)
- **Restarted.** Every `interval_s` it pings over that connection. When the
  server is gone it calls `ensure_server`, whose lock lets exactly one process
  start it again on the same socket, config and append-only file (every
  acknowledged write was fsynced, so nothing is lost); the others attach. The
  watcher then registers again. redis-py clients reconnect on their next
  command; commands sent while it is down fail like any Redis blip (the
  loops retry, /healthz answers 503, a worker's run waiting on a person is
  resumed by the takeover), so nothing else changes.
- **Stopped by the last one out.** At exit a runtime takes the start lock,
  lists the other registered users, and sends SHUTDOWN only if there are none,
  waiting for the server to be gone before releasing the lock (a new server
  must not start while the old one still removes its socket). Otherwise it
  renames its connection away (acknowledged, so the next one out will not
  count it) and leaves the server running. The server therefore outlives the
  process that started it while others use it. A person can run `hitl-bot
  valkey stop`, which refuses while any user is registered, since their
  watchers would start it again: it is for a server left running after every
  user was killed.

Joining (ping with the name set) happens under the same lock, so a process
joining and the last one leaving never miss each other; if the server was
stopped in between, the joiner starts it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from bot.db import messages as msg
from bot.db.valkey.embedded import EmbeddedServer, ensure_server, reap_children
from bot.db.valkey.embedded_dir import (
    LOG_NAME,
    PING_TIMEOUT,
    POLL,
    SOCKET_NAME,
    Liveness,
    lock_timeout,
    open_lock,
    ping_socket,
    read_pid,
    server_alive,
    socket_url,
    try_lock,
)
from bot.errors import StoreUnavailable

__all__ = ["USER_PREFIX", "EmbeddedWatch", "Status", "StopResult", "status", "stop_unused"]

log = logging.getLogger(__name__)

USER_PREFIX = "hitl-user:"
WATCH_INTERVAL_S = 0.25  # a dead server is noticed within this, restarted ~0.1 s later
START_TIMEOUT_S = 10.0


class EmbeddedWatch:
    """One runtime's use of the embedded Valkey: registered, restarted if it dies,
    stopped at `close()` if no other user is left."""

    def __init__(self, server: EmbeddedServer, *, interval_s: float, timeout_s: float) -> None:
        self.server = server  # the latest one seen: replaced when this process restarts it
        self.data_dir = server.data_dir
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.name = f"{USER_PREFIX}{os.getpid()}:{secrets.token_hex(4)}"
        self._conn = _client(server.url, name=self.name)
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        *,
        interval_s: float = WATCH_INTERVAL_S,
        timeout_s: float = START_TIMEOUT_S,
    ) -> EmbeddedWatch:
        """Start or attach to the server for `data_dir`, register, and start watching it."""
        # ensure_server blocks (lock, process start): keep it off the event loop.
        server = await asyncio.to_thread(ensure_server, data_dir, timeout=timeout_s)
        watch = cls(server, interval_s=interval_s, timeout_s=timeout_s)
        try:
            await watch._join()
        except BaseException:
            await watch._conn.aclose()
            raise
        watch._task = asyncio.create_task(watch._watch(), name=f"valkey-watch-{watch.name}")
        return watch

    async def close(self) -> None:
        """Stop watching and leave; the last user out stops the server."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            async with _locked(self.data_dir, self.timeout_s):
                await self._leave()
        except StoreUnavailable as exc:
            log.warning(msg.LEAVE_FAILED.format(data_dir=self.data_dir, error=exc))
        finally:
            await self._conn.aclose()
            reap_children()

    async def _join(self) -> None:
        """Register (a PING on the named connection) under the start lock.

        A server stopped by the last user out between ensure_server and here
        is started again.
        """
        deadline = time.monotonic() + self.timeout_s
        while True:
            async with _locked(self.data_dir, self.timeout_s):
                try:
                    await self._conn.ping()
                    return
                except (RedisError, OSError) as exc:
                    error: Exception = exc
            if time.monotonic() >= deadline:
                raise StoreUnavailable(
                    msg.JOIN_FAILED.format(
                        data_dir=self.data_dir, error=error, log=self.data_dir / LOG_NAME
                    )
                )
            await self._ensure(error)

    async def _ensure(self, error: Exception) -> None:
        reap_children()
        server = await asyncio.to_thread(ensure_server, self.data_dir, timeout=self.timeout_s)
        text = msg.RESTARTED if server.owned else msg.REJOINED
        cause = str(error) or type(error).__name__
        line = text.format(data_dir=self.data_dir, error=cause, pid=server.pid)
        if server.owned:
            self.server = server
            log.warning(line, extra={"valkey_pid": server.pid})
        else:
            log.info(line, extra={"valkey_pid": server.pid})

    async def _watch(self) -> None:
        # Not `while True`: under load a cancel can be lost inside a timed redis-py
        # command and taken below for a failed ping, leaving this task "cancelling" yet
        # looping and close() waiting forever. The flag ends the loop regardless.
        while not self._closing:
            await asyncio.sleep(self.interval_s)
            try:
                await self._conn.ping()
                continue
            except (RedisError, OSError) as exc:
                error: Exception = exc
            try:
                await self._ensure(error)
                await self._join()
            except StoreUnavailable as exc:
                log.warning(
                    msg.REPAIR_FAILED.format(
                        data_dir=self.data_dir, error=exc, interval=self.interval_s
                    )
                )
            except Exception:  # the watcher is what brings the store back: it must not die
                log.exception(msg.WATCH_FAILED.format(data_dir=self.data_dir))

    async def _leave(self) -> None:
        """Under the start lock: SHUTDOWN if no other user is registered, else deregister."""
        others: list[int] | None = None
        error: Exception | None = None
        # Twice: the first command on a connection the server dropped (it was
        # restarted by another user) fails and reconnects the second.
        for _ in range(2):
            try:
                own = await self._conn.client_id()
                others = await _users(self._conn, exclude=own)
                break
            except (RedisError, OSError) as exc:
                error = exc
        if others is None:
            sock = self.data_dir / SOCKET_NAME
            if await asyncio.to_thread(ping_socket, sock) is not Liveness.DOWN:
                log.warning(msg.LEAVE_FAILED.format(data_dir=self.data_dir, error=error))
            return  # down: nothing to stop, and no user counts this one any more
        if others:
            log.info(
                msg.LEFT_RUNNING.format(
                    data_dir=self.data_dir, pids=", ".join(map(str, sorted(set(others))))
                )
            )
            # Acknowledged, unlike a close: the next user out must not count this one.
            with contextlib.suppress(RedisError, OSError):
                await self._conn.client_setname("")
            return
        await _shutdown(self._conn, self.data_dir, self.timeout_s)
        log.info(msg.STOPPED.format(data_dir=self.data_dir))


@dataclass(frozen=True)
class Status:
    data_dir: Path
    state: Liveness
    pid: int | None
    users: list[int] = field(default_factory=list)  # pids of registered hitl-bot processes
    keys: int | None = None
    appendonly: str = "?"
    appendfsync: str = "?"


async def status(data_dir: Path) -> Status:
    """What runs for `data_dir` and who uses it; never starts anything."""
    data_dir = Path(data_dir).expanduser().resolve()
    sock = data_dir / SOCKET_NAME
    state = await asyncio.to_thread(ping_socket, sock)
    pid = read_pid(data_dir)
    if state is not Liveness.READY:
        alive = pid is not None and server_alive(pid, data_dir)
        return Status(data_dir, state, pid if alive else None)
    conn = _client(socket_url(data_dir))
    try:
        config = await conn.config_get("append*")
        return Status(
            data_dir,
            state,
            pid,
            users=sorted(set(await _users(conn))),
            keys=int(await conn.dbsize()),
            appendonly=str(config.get("appendonly", "?")),
            appendfsync=str(config.get("appendfsync", "?")),
        )
    except (RedisError, OSError):
        return Status(data_dir, Liveness.DOWN, pid)
    finally:
        await conn.aclose()


@dataclass(frozen=True)
class StopResult:
    stopped: bool
    pid: int | None = None
    users: list[int] = field(default_factory=list)  # why it was not stopped


async def stop_unused(data_dir: Path, *, timeout_s: float = START_TIMEOUT_S) -> StopResult:
    """`hitl-bot valkey stop`: SHUTDOWN the server unless a hitl-bot process uses it."""
    data_dir = Path(data_dir).expanduser().resolve()
    sock = data_dir / SOCKET_NAME
    if not data_dir.is_dir() or await asyncio.to_thread(ping_socket, sock) is Liveness.DOWN:
        return StopResult(stopped=False)
    conn = _client(socket_url(data_dir))
    try:
        async with _locked(data_dir, timeout_s):
            users = await _users(conn)
            if users:
                return StopResult(stopped=False, users=sorted(set(users)))
            pid = read_pid(data_dir)
            await _shutdown(conn, data_dir, timeout_s)
            return StopResult(stopped=True, pid=pid)
    except (RedisError, OSError) as exc:  # -LOADING, or it died under us
        raise StoreUnavailable(msg.CLI_FAILED.format(data_dir=data_dir, error=exc)) from exc
    finally:
        await conn.aclose()


def _client(url: str, *, name: str | None = None) -> redis.asyncio.Redis:
    """One dedicated connection that fails fast: the watcher, not redis-py, decides what next.

    With a name, every (re)connect sends CLIENT SETNAME: reconnecting re-registers.
    """
    return redis.asyncio.Redis.from_url(
        url,
        client_name=name,
        single_connection_client=True,
        decode_responses=True,
        socket_timeout=PING_TIMEOUT,
        socket_connect_timeout=PING_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )


async def _users(conn: redis.asyncio.Redis, *, exclude: int | None = None) -> list[int]:
    """Pids of the registered users (one entry per runtime), leaving out connection `exclude`."""
    pids = []
    for client in await conn.client_list():
        name = str(client.get("name", ""))
        if not name.startswith(USER_PREFIX) or int(client["id"]) == exclude:
            continue
        pid = name.removeprefix(USER_PREFIX).partition(":")[0]
        pids.append(int(pid) if pid.isdigit() else 0)
    return pids


async def _shutdown(conn: redis.asyncio.Redis, data_dir: Path, timeout: float) -> None:
    """SHUTDOWN and wait until the process is gone; kill it if it does not go in `timeout`.

    With `appendfsync always` no acknowledged write depends on a clean exit.
    """
    pid = read_pid(data_dir)
    with contextlib.suppress(RedisError, OSError):
        await conn.shutdown()  # redis-py counts the dropped connection as success
    deadline = time.monotonic() + timeout
    killed = False
    while pid is not None and server_alive(pid, data_dir):
        reap_children()
        if time.monotonic() >= deadline:
            if killed:
                break  # nothing more to do; ensure_server never starts a second one over it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            log.warning(msg.KILLED.format(pid=pid, data_dir=data_dir, timeout=timeout))
            killed, deadline = True, time.monotonic() + timeout
        await asyncio.sleep(POLL)
    reap_children()


@contextlib.asynccontextmanager
async def _locked(data_dir: Path, timeout: float) -> AsyncIterator[None]:
    """The start lock of embedded.py, polled without blocking the event loop.

    Polled rather than taken in a thread: a cancelled waiter must not leave
    a thread that takes the lock later and never gives it back.
    """
    fd = open_lock(data_dir)
    try:
        deadline = time.monotonic() + timeout
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                raise lock_timeout(data_dir, timeout)
            await asyncio.sleep(POLL)
        yield
    finally:
        os.close(fd)
