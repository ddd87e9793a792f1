"""The embedded Valkey's data dir: its file names, its lock, and probes that look at
what runs there without changing anything (bot/db/valkey/embedded.py starts the server).
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from bot.errors import StoreUnavailable

__all__ = [
    "LOCK_NAME",
    "LOG_NAME",
    "PID_NAME",
    "SOCKET_NAME",
    "Liveness",
    "lock_timeout",
    "make_private",
    "open_lock",
    "ping_socket",
    "read_pid",
    "send",
    "server_alive",
    "socket_url",
    "start_lock",
    "try_lock",
]

SOCKET_NAME = "valkey.sock"
LOCK_NAME = "valkey.lock"
PID_NAME = "valkey.pid"
CONF_NAME = "valkey.conf"
LOG_NAME = "valkey.log"

POLL = 0.02  # seconds between liveness checks while waiting
PING_TIMEOUT = 1.0  # a live server answers PING in microseconds; 1 s means hung


DATA_DIR_UNUSABLE = (
    "Cannot use {data_dir} for the embedded Valkey: {error}; "
    "fix: export HITL_DATA_DIR=<a directory you can write>, or set REDIS_URL."
)
NOT_PRIVATE = (
    "Cannot keep {path} private to this user ({error}): the embedded Valkey's data (every "
    "request, its arguments and audit) would be readable by other local users; fix: "
    "chown it to this user, or export HITL_DATA_DIR=<a directory of your own>."
)
AOF_DIR_NAME = "appendonlydir"
LOCK_TIMEOUT = (
    "Another process has been starting the embedded Valkey in {data_dir} for over "
    "{timeout:g} s ({lock} is held); fix: wait for it, or look at {log}."
)


class Liveness(enum.StrEnum):
    """What a PING over the socket says about the server behind it."""

    READY = "ready"  # it answered +PONG
    BUSY = "busy"  # it answered with an error (-LOADING its data, -BUSY in a script): alive
    DOWN = "down"  # no socket, nobody listening, or no answer in time


@contextlib.contextmanager
def start_lock(data_dir: Path, deadline: float, timeout: float) -> Iterator[None]:
    """Hold `valkey.lock` so that only one process at a time checks for and starts a server.

    flock, not lockf: flock locks belong to the open file, so two threads of
    one process exclude each other too, and the kernel drops the lock when
    its holder dies, so a killed starter never leaves it held. The
    descriptor is not inheritable (Python's default), so valkey-server does
    not keep the lock after we start it. The users of a server take the same
    lock to join it and to stop it (bot/db/valkey/embedded_watch.py).
    """
    fd = open_lock(data_dir)
    try:
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                raise lock_timeout(data_dir, timeout)
            time.sleep(POLL)
        yield
    finally:
        os.close(fd)


def open_lock(data_dir: Path) -> int:
    """Open (creating) `valkey.lock`; the caller closes the descriptor, which unlocks it."""
    try:
        return os.open(data_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StoreUnavailable(DATA_DIR_UNUSABLE.format(data_dir=data_dir, error=exc)) from exc


def make_private(data_dir: Path) -> None:
    """The data dir 0700 and what the store keeps in it 0600 (the append-only dir 0700);
    StoreUnavailable naming the path where that cannot be done.

    The socket has no password, and the append-only files hold every request: a dir
    that already existed as 0755, or files a server wrote under a umask of 022, would
    leave both open to every local user. Only what is too open is changed."""
    aof = data_dir / AOF_DIR_NAME
    _tighten(data_dir, 0o700)
    for path in [*_entries(data_dir), *(_entries(aof) if aof.is_dir() else [])]:
        if not path.is_symlink():
            _tighten(path, 0o700 if path.is_dir() else 0o600)


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError as exc:
        raise StoreUnavailable(NOT_PRIVATE.format(path=folder, error=exc)) from exc


def _tighten(path: Path, mode: int) -> None:
    try:
        st = path.lstat()
        if st.st_mode & 0o777 & ~mode:
            os.chmod(path, st.st_mode & 0o777 & mode)
            if path.lstat().st_mode & 0o777 & ~mode:  # a filesystem that ignores chmod
                raise PermissionError("its mode cannot be changed")
    except FileNotFoundError:
        return  # gone meanwhile (a rewrite replaced an append-only file): nothing to open
    except OSError as exc:
        raise StoreUnavailable(NOT_PRIVATE.format(path=path, error=exc)) from exc


def try_lock(fd: int) -> bool:
    """Take the lock on `fd` if nobody holds it; never blocks."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def lock_timeout(data_dir: Path, timeout: float) -> StoreUnavailable:
    return StoreUnavailable(
        LOCK_TIMEOUT.format(
            data_dir=data_dir,
            timeout=timeout,
            lock=data_dir / LOCK_NAME,
            log=data_dir / LOG_NAME,
        )
    )


def ping_socket(sock: Path) -> Liveness:
    try:
        reply = send(sock, b"PING", timeout=PING_TIMEOUT)
    except OSError:
        return Liveness.DOWN
    if reply.startswith(b"+PONG"):
        return Liveness.READY
    if reply.startswith(b"-"):
        return Liveness.BUSY
    return Liveness.DOWN


def send(sock: Path, command: bytes, *, timeout: float) -> bytes:
    """Send one argument-less command over the socket; return the first reply line.

    A raw RESP exchange, so the check works from sync code and without a
    client library's retries.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(os.fsencode(sock))
        conn.sendall(b"*1\r\n$%d\r\n%s\r\n" % (len(command), command))
        reply = b""
        while not reply.endswith(b"\r\n") and len(reply) < 4096:
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply


def socket_url(data_dir: Path) -> str:
    """The redis-py URL of the server for `data_dir`."""
    # redis-py unquotes the path, so a data dir with spaces or '%' survives.
    return "unix://" + quote(str(data_dir / SOCKET_NAME))


def read_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / PID_NAME).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def server_alive(pid: int, data_dir: Path) -> bool:
    """True if `pid` is a live (not zombie) process serving `data_dir`.

    On Linux the process's cwd must be the data dir (valkey chdirs to its
    `dir`), so a pid reused by another program after a crash does not count.
    """
    proc = Path("/proc") / str(pid)
    if Path("/proc/self").exists():
        try:
            stat = (proc / "stat").read_text(encoding="ascii", errors="replace")
            # Field 3, after the parenthesised command name (which may hold spaces).
            state = stat.rpartition(")")[2].split()[0]
            return state not in ("Z", "X") and os.readlink(proc / "cwd") == str(data_dir)
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
