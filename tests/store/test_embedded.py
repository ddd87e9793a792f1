"""The embedded Valkey: one server per data dir, shared, durable across kill -9.

Data dirs are short mkdtemp dirs under /tmp because pytest's tmp_path can be
longer than a Unix socket path may be.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from bot.core.policy import DEFAULT_POLICY
from bot.core.proposal import propose
from bot.db.valkey.embedded import (
    LOCK_NAME,
    MAX_SOCKET_PATH,
    MEMORY_SETTINGS,
    PID_NAME,
    SOCKET_NAME,
    EmbeddedServer,
    Liveness,
    ensure_server,
)
from bot.errors import StoreUnavailable
from bot.store.codec import to_hash
from tests.support.poll import eventually_sync

linux_only = pytest.mark.skipif(not Path("/proc/self").exists(), reason="reads /proc")
REPO = Path(__file__).resolve().parents[2]
ARGS = {
    "order_id": "ord_2026_05_118734",
    "amount": 129.99,
    "reason": "Parcel arrived damaged. " * 4,
}


def valkey_pids(data_dir: Path) -> list[int]:
    """Live valkey-server processes whose working directory is `data_dir`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "valkey-server":
                continue
            if (entry / "stat").read_text().rpartition(")")[2].split()[0] == "Z":
                continue
            if os.readlink(entry / "cwd") == str(data_dir):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hv", dir="/tmp")).resolve()
    try:
        yield path
    finally:
        # The safety net: whatever a failed test left running for this dir dies.
        if Path("/proc/self").exists():
            for pid in valkey_pids(path):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(AssertionError):  # the directory goes regardless
                eventually_sync(lambda: not valkey_pids(path), what="the killed servers gone")
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def servers() -> Iterator[list[EmbeddedServer]]:
    """Servers a test started; each is shut down gracefully after the test."""
    started: list[EmbeddedServer] = []
    try:
        yield started
    finally:
        for server in started:
            server.stop()


def client(server: EmbeddedServer) -> redis.Redis:
    return redis.Redis.from_url(server.url, decode_responses=True)


def test_starts_a_server_that_answers_ping(data_dir: Path, servers: list[EmbeddedServer]) -> None:
    server = ensure_server(data_dir)
    servers.append(server)

    assert server.owned
    assert server.url == f"unix://{data_dir}/{SOCKET_NAME}"
    assert server.ping() is Liveness.READY
    with client(server) as r:
        assert r.ping()
        assert r.config_get("appendfsync") == {"appendfsync": "always"}
        assert r.config_get("appendonly") == {"appendonly": "yes"}
        assert r.config_get("port") == {"port": "0"}
    assert stat.S_IMODE((data_dir / SOCKET_NAME).stat().st_mode) == 0o600
    assert (data_dir / PID_NAME).read_text().strip() == str(server.pid)


def test_server_keeps_a_request_hash_compact(data_dir: Path, servers: list[EmbeddedServer]) -> None:
    """The encodings the memory bench measures with (CONFIG SET on a plain Valkey) are
    the ones the embedded server runs with, and a request's hash, whose arguments and
    escalation chain exceed Valkey's default 64-byte value limit, stays a listpack."""
    server = ensure_server(data_dir)
    servers.append(server)
    req, _ = propose(
        DEFAULT_POLICY, request_id="r1", tool="refund", args=ARGS, requester="U1", now=1
    )
    with client(server) as r:
        for name, value in MEMORY_SETTINGS.items():
            assert r.config_get(name) == {name: value}
        r.hset("hitl:{s00}:req:r1", mapping=to_hash(req))
        assert r.object("encoding", "hitl:{s00}:req:r1") == "listpack"


def test_server_runs_in_its_own_session(data_dir: Path, servers: list[EmbeddedServer]) -> None:
    server = ensure_server(data_dir)
    servers.append(server)
    assert server.pid is not None
    # Its own session and process group: a Ctrl-C to the terminal's group misses it.
    assert os.getsid(server.pid) == server.pid
    assert os.getpgid(server.pid) != os.getpgid(0)


def test_second_call_attaches_to_the_same_server(
    data_dir: Path, servers: list[EmbeddedServer]
) -> None:
    first = ensure_server(data_dir)
    servers.append(first)
    second = ensure_server(data_dir)

    assert not second.owned
    assert second.pid == first.pid
    assert second.url == first.url
    with client(first) as a, client(second) as b:
        a.set("hitl:test", "shared")
        assert b.get("hitl:test") == "shared"
        assert a.client_id() != b.client_id()

    second.stop()  # not owned: must leave the server to its owner
    assert first.ping() is Liveness.READY


def test_stop_shuts_down_and_cleans_up(data_dir: Path) -> None:
    server = ensure_server(data_dir)
    server.stop()

    assert server.ping() is Liveness.DOWN
    assert not (data_dir / SOCKET_NAME).exists()
    assert not (data_dir / PID_NAME).exists()
    server.stop()  # twice is harmless


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bot.db.valkey.embedded import ensure_server

    go = Path(sys.argv[2])
    print("ready", flush=True)
    while not go.exists():  # the barrier: all racers start at once
        time.sleep(0.001)
    server = ensure_server(Path(sys.argv[1]))
    print(server.owned, server.pid, flush=True)
    """
)


@linux_only
def test_racing_processes_end_with_one_server(data_dir: Path) -> None:
    go = data_dir / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(data_dir), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(6)
    ]
    for racer in racers:  # every interpreter started and reached the barrier
        assert racer.stdout is not None
        assert racer.stdout.readline() == "ready\n", racer.communicate(timeout=30)
    go.touch()
    results = []
    for racer in racers:
        out, err = racer.communicate(timeout=30)
        assert racer.returncode == 0, err
        owned, pid = out.split()
        results.append((owned == "True", int(pid)))

    assert sum(owned for owned, _ in results) == 1
    assert len({pid for _, pid in results}) == 1
    # Every racer has exited; the server they share outlives its starter.
    assert valkey_pids(data_dir) == [results[0][1]]
    attached = ensure_server(data_dir)
    assert not attached.owned
    assert attached.pid == results[0][1]
    attached.kill()
    assert valkey_pids(data_dir) == []


def test_threads_racing_end_with_one_server(data_dir: Path, servers: list[EmbeddedServer]) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda _: ensure_server(data_dir), range(4)))
    servers.extend(found)

    assert sum(server.owned for server in found) == 1
    assert len({server.pid for server in found}) == 1


@linux_only
def test_writes_survive_kill_9(data_dir: Path, servers: list[EmbeddedServer]) -> None:
    first = ensure_server(data_dir)
    with client(first) as r:
        for i in range(500):
            r.set(f"hitl:k{i}", i)
        r.rpush("hitl:list", "a", "b", "c")

    first.kill()
    # What a crash leaves: a socket file nobody listens on, and a pid file.
    assert (data_dir / SOCKET_NAME).exists()
    assert (data_dir / PID_NAME).exists()
    assert first.ping() is Liveness.DOWN
    assert valkey_pids(data_dir) == []

    second = ensure_server(data_dir)
    servers.append(second)
    assert second.owned
    assert second.pid != first.pid
    with client(second) as r:
        assert r.dbsize() == 501
        assert r.get("hitl:k499") == "499"
        assert r.lrange("hitl:list", 0, -1) == ["a", "b", "c"]


def test_stale_socket_and_reused_pid_are_cleaned(
    data_dir: Path, servers: list[EmbeddedServer]
) -> None:
    # A socket file bound and closed: connecting to it is refused.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
        stale.bind(str(data_dir / SOCKET_NAME))
    # A pid that is alive but is not a valkey-server for this dir (a reused pid).
    (data_dir / PID_NAME).write_text(f"{os.getpid()}\n")

    server = ensure_server(data_dir, timeout=5)
    servers.append(server)

    assert server.owned
    assert server.pid != os.getpid()
    assert server.ping() is Liveness.READY


@linux_only
def test_live_server_that_does_not_answer_is_never_replaced(
    data_dir: Path, servers: list[EmbeddedServer]
) -> None:
    server = ensure_server(data_dir)
    servers.append(server)
    assert server.pid is not None
    os.kill(server.pid, signal.SIGSTOP)
    try:
        with pytest.raises(StoreUnavailable, match=rf"pid {server.pid}.*does not answer"):
            ensure_server(data_dir, timeout=1.5)
        assert valkey_pids(data_dir) == [server.pid]
    finally:
        os.kill(server.pid, signal.SIGCONT)
    assert server.ping() is Liveness.READY


def test_waits_for_another_starter_holding_the_lock(data_dir: Path) -> None:
    with open(data_dir / LOCK_NAME, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(StoreUnavailable, match=r"valkey\.lock is held"):
            ensure_server(data_dir, timeout=0.3)
    assert not (data_dir / SOCKET_NAME).exists()


def test_too_long_data_dir_is_refused(data_dir: Path) -> None:
    long_dir = data_dir / ("d" * (MAX_SOCKET_PATH - len(str(data_dir))))

    with pytest.raises(StoreUnavailable) as caught:
        ensure_server(long_dir)

    message = str(caught.value)
    assert "HITL_DATA_DIR" in message
    assert f"the {MAX_SOCKET_PATH} bytes" in message
    assert not long_dir.exists()


def test_path_at_the_limit_is_accepted(servers: list[EmbeddedServer]) -> None:
    base = Path(tempfile.mkdtemp(prefix="hv", dir="/tmp")).resolve()
    try:
        pad = MAX_SOCKET_PATH - len(str(base)) - len("/" + SOCKET_NAME) - 1
        data_dir = base / ("d" * pad)
        assert len(str(data_dir / SOCKET_NAME)) == MAX_SOCKET_PATH
        server = ensure_server(data_dir)
        servers.append(server)
        assert server.ping() is Liveness.READY
        server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_data_dir_with_spaces(data_dir: Path, servers: list[EmbeddedServer]) -> None:
    spaced = data_dir / 'a b"c'
    server = ensure_server(spaced)
    servers.append(server)
    with client(server) as r:
        assert r.ping()
        assert r.config_get("dir") == {"dir": str(spaced)}


def test_a_server_that_cannot_start_reports_its_log(data_dir: Path) -> None:
    # A file where valkey wants its append-only directory: it exits at once.
    (data_dir / "appendonlydir").write_text("not a directory")

    with pytest.raises(StoreUnavailable, match="exited with status") as caught:
        ensure_server(data_dir)

    assert "appendonlydir" in str(caught.value)
    assert str(data_dir / "valkey.log") in str(caught.value)


def _modes(data_dir: Path) -> dict[str, int]:
    """Mode of the data dir ("."), of each entry in it and in its append-only dir."""
    found = {".": stat.S_IMODE(data_dir.stat().st_mode)}
    for path in [*data_dir.iterdir(), *(data_dir / "appendonlydir").iterdir()]:
        found[str(path.relative_to(data_dir))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def _private(modes: dict[str, int]) -> bool:
    dirs = {".", "appendonlydir"}
    return all(mode == (0o700 if name in dirs else 0o600) for name, mode in modes.items())


def test_an_open_data_dir_and_its_files_are_made_private(data_dir: Path) -> None:
    # A data dir made by hand (or by an older version) is 0755, and its server wrote the
    # append-only files 0644 under the usual umask: every local user could read them.
    data_dir.chmod(0o755)
    first = ensure_server(data_dir)
    with client(first) as r:
        r.set("hitl:secret", "the arguments of a refund")
        r.bgrewriteaof()  # new files written by the server itself, after the start
        eventually_sync(
            lambda: not r.info("persistence")["aof_rewrite_in_progress"],
            what="the AOF rewrite done",
        )
    modes = _modes(data_dir)
    assert _private(modes), modes
    assert {"appendonlydir", SOCKET_NAME, PID_NAME, LOCK_NAME} <= set(modes)
    assert any(name.endswith(".aof") for name in modes)
    first.stop()

    for path in [data_dir, data_dir / "appendonlydir"]:
        path.chmod(0o755)
    for path in (data_dir / "appendonlydir").iterdir():
        path.chmod(0o644)
    (data_dir / "valkey.log").chmod(0o644)
    second = ensure_server(data_dir)
    try:
        modes = _modes(data_dir)
        assert _private(modes), modes
        with client(second) as r:
            assert r.get("hitl:secret") == "the arguments of a refund"
    finally:
        second.stop()


def test_a_data_dir_that_cannot_be_made_private_is_refused_naming_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir.chmod(0o755)

    def refuse(path: object, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    # As root every chmod succeeds; a dir owned by another user is what this stands for.
    monkeypatch.setattr(os, "chmod", refuse)
    with pytest.raises(StoreUnavailable) as caught:
        ensure_server(data_dir)
    assert str(data_dir) in str(caught.value) and "HITL_DATA_DIR" in str(caught.value)
    assert valkey_pids(data_dir) == []  # nothing started on an open dir
