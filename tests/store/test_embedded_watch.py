"""The embedded Valkey is supervised: restarted with its data when it dies, kept while any
hitl-bot process uses it, stopped by the last one out, and `hitl-bot valkey status | stop`.

Users in other processes are real processes (a killed one must stop counting because
the kernel closed its connection, not because anyone cleaned up).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from typer.testing import CliRunner

from bot.cli.main import app
from bot.db.valkey.embedded import EmbeddedServer, ensure_server
from bot.db.valkey.embedded_watch import EmbeddedWatch, status, stop_unused
from tests.store.test_embedded import REPO, data_dir, linux_only, valkey_pids  # noqa: F401
from tests.support.poll import eventually

pytestmark = [linux_only, pytest.mark.timeout(60)]

USER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from bot.db.valkey.embedded_watch import EmbeddedWatch

    async def main():
        watch = await EmbeddedWatch.open(Path(sys.argv[1]), interval_s=0.05)
        print(watch.server.pid, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
    """
)


@pytest.fixture
async def watches() -> AsyncIterator[list[EmbeddedWatch]]:
    opened: list[EmbeddedWatch] = []
    try:
        yield opened
    finally:
        for watch in opened:
            await watch.close()


@pytest.fixture
def users(data_dir: Path) -> Iterator[Callable[[], subprocess.Popen[str]]]:  # noqa: F811
    """Start hitl-bot users in processes of their own; killed after the test."""
    started: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", USER, str(data_dir)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        started.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip().isdigit()
        return proc

    try:
        yield start
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


async def open_watch(data_dir: Path, watches: list[EmbeddedWatch]) -> EmbeddedWatch:  # noqa: F811
    watch = await EmbeddedWatch.open(data_dir, interval_s=0.05)
    watches.append(watch)
    return watch


async def ready_pid(data_dir: Path, old: int | None) -> int | None:  # noqa: F811
    """The pid of a server that answers, other than `old`, or None."""
    found = await status(data_dir)
    return found.pid if found.keys is not None and found.pid != old else None


async def test_a_killed_server_is_started_again_with_its_data(
    data_dir: Path,  # noqa: F811
    watches: list[EmbeddedWatch],
) -> None:
    watch = await open_watch(data_dir, watches)
    first = watch.server.pid
    client = Redis.from_url(watch.server.url, decode_responses=True)
    try:
        for i in range(200):
            await client.set(f"hitl:k{i}", i)
        os.kill(first or 0, signal.SIGKILL)

        # Nobody calls anything: the watcher alone brings it back, on the same socket.
        # The server answers a moment before the watch records it as its own (the start
        # returns from a thread): wait for both, then for one server only.
        async def restarted_by_the_watch() -> bool:
            pid = await ready_pid(data_dir, first)
            return pid is not None and pid == watch.server.pid

        await eventually(restarted_by_the_watch, what="server restarted and recorded by the watch")
        assert valkey_pids(data_dir) == [watch.server.pid]
        assert watch.server.pid != first
        assert await client.dbsize() == 200  # the same client: redis-py reconnects
        assert await client.get("hitl:k199") == "199"
        assert (await status(data_dir)).users == [os.getpid()]  # registered again
    finally:
        await client.aclose()


async def test_every_user_process_sees_one_restart(
    data_dir: Path,  # noqa: F811
    users: Callable[[], subprocess.Popen[str]],
) -> None:
    procs = [users() for _ in range(3)]
    (first,) = valkey_pids(data_dir)
    os.kill(first, signal.SIGKILL)

    await eventually(lambda: ready_pid(data_dir, first), what="restarted server")
    # Each one's watcher notices and registers again on its own.
    pids = sorted(p.pid for p in procs)
    await eventually(lambda: _users_are(data_dir, pids), what="every user registered again")
    # Three watchers raced for it; the start lock let exactly one start it.
    assert valkey_pids(data_dir) == [(await status(data_dir)).pid]


async def test_it_outlives_its_starter_and_the_last_user_out_stops_it(
    data_dir: Path,  # noqa: F811
    watches: list[EmbeddedWatch],
) -> None:
    starter = await open_watch(data_dir, watches)
    other = await open_watch(data_dir, watches)
    assert starter.server.owned and not other.server.owned
    pid = starter.server.pid

    await starter.close()
    assert valkey_pids(data_dir) == [pid]
    assert (await status(data_dir)).users == [os.getpid()]  # only `other` counts now

    await other.close()
    assert valkey_pids(data_dir) == []
    assert not (data_dir / "valkey.sock").exists()


async def test_a_killed_user_does_not_keep_it_running(
    data_dir: Path,  # noqa: F811
    watches: list[EmbeddedWatch],
    users: Callable[[], subprocess.Popen[str]],
) -> None:
    # The SDK's direct mode in a script that gets killed: no cleanup ever runs there.
    script = users()
    watch = await open_watch(data_dir, watches)
    assert not watch.server.owned
    script.kill()
    script.wait()

    await eventually(lambda: _users_are(data_dir, [os.getpid()]), what="the killed user gone")
    await watch.close()
    assert valkey_pids(data_dir) == []


async def _users_are(data_dir: Path, pids: list[int]) -> bool:  # noqa: F811
    return sorted((await status(data_dir)).users) == pids


async def test_leaving_while_it_is_down_does_not_start_it(
    data_dir: Path,  # noqa: F811
    watches: list[EmbeddedWatch],
) -> None:
    watch = await EmbeddedWatch.open(data_dir, interval_s=3600)  # never repairs in this test
    pid = watch.server.pid
    os.kill(pid or 0, signal.SIGKILL)
    await eventually(lambda: valkey_pids(data_dir) == [], what="server gone")

    await watch.close()
    assert valkey_pids(data_dir) == []


async def test_a_hung_server_is_waited_for_never_replaced(
    data_dir: Path,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A second server on the same append-only file would corrupt it.
    watch = await EmbeddedWatch.open(data_dir, interval_s=0.05, timeout_s=0.5)
    try:
        pid = watch.server.pid or 0
        os.kill(pid, signal.SIGSTOP)
        try:
            await eventually(
                lambda: "could not be started again" in caplog.text, what="a repair refused"
            )
            assert valkey_pids(data_dir) == [pid]
        finally:
            os.kill(pid, signal.SIGCONT)
        await eventually(lambda: _users_are(data_dir, [os.getpid()]), what="registered again")
        assert valkey_pids(data_dir) == [pid]
    finally:
        await watch.close()
    assert valkey_pids(data_dir) == []


async def test_valkey_stop_refuses_while_a_process_uses_it(
    data_dir: Path,  # noqa: F811
    users: Callable[[], subprocess.Popen[str]],
) -> None:
    script = users()
    (pid,) = valkey_pids(data_dir)

    result = await stop_unused(data_dir)
    assert not result.stopped and result.users == [script.pid]
    assert valkey_pids(data_dir) == [pid]
    argv = ["valkey", "stop", "--data-dir", str(data_dir)]
    refused = await asyncio.to_thread(CliRunner().invoke, app, argv)  # it runs its own loop
    assert refused.exit_code == 1 and f"pids {script.pid})" in refused.output
    assert valkey_pids(data_dir) == [pid]

    # Every user was killed: the server is left running, and a person stops it.
    script.kill()
    script.wait()
    await eventually(lambda: _users_are(data_dir, []), what="the killed user gone")
    result = await stop_unused(data_dir)
    assert result.stopped and result.pid == pid
    assert valkey_pids(data_dir) == []
    assert not (await stop_unused(data_dir)).stopped  # nothing left: harmless


def test_valkey_cli_status_and_stop(
    data_dir: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("HITL_DATA_DIR", str(data_dir))
    runner = CliRunner()

    down = runner.invoke(app, ["valkey", "status"])
    assert down.exit_code == 1 and "No embedded Valkey runs" in down.output

    server: EmbeddedServer = ensure_server(data_dir)  # left running, as after kill -9 of all
    up = runner.invoke(app, ["valkey", "status"])
    assert up.exit_code == 0, up.output
    assert f"pid {server.pid}" in up.output and "append-only yes" in up.output
    assert "No hitl-bot process uses it" in up.output

    stopped = runner.invoke(app, ["valkey", "stop"])
    assert stopped.exit_code == 0, stopped.output
    assert "Stopped" in stopped.output
    assert valkey_pids(data_dir) == []

    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    remote = runner.invoke(app, ["valkey", "stop"])
    assert remote.exit_code == 2 and "REDIS_URL is set" in remote.output
