"""Embedded Valkey recovery: how long after a kill -9 does it answer again, with nobody acting?

Starts --users processes that each hold an EmbeddedWatch (what every serve, worker and
SDK script holds) on one fresh data dir holding --keys keys, then kills the server --kills
times. For each kill it records when a server answers PING again and when every user has
registered again. The baseline, measured in the same run on the same data dir: the bare
restart (ensure_server by hand, nobody watching), the floor the watchers add their
polling to. Prints figures; not a test. Target: healthy again within 3 s.

    .venv/bin/python bench/valkey_restart.py [--users 3] [--kills 10] [--keys 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _common import print_load, verdict
from redis.asyncio import Redis

from bot.db.valkey.embedded import ensure_server
from bot.db.valkey.embedded_dir import Liveness, ping_socket, read_pid, server_alive
from bot.db.valkey.embedded_watch import status, stop_unused

ROOT = Path(__file__).resolve().parents[1]
USER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from bot.db.valkey.embedded_watch import EmbeddedWatch

    async def main():
        await EmbeddedWatch.open(Path(sys.argv[1]))
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
    """
)


def kill_server(data_dir: Path) -> int:
    pid = read_pid(data_dir)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    while server_alive(pid, data_dir):
        time.sleep(0.001)
    return pid


async def fill(data_dir: Path, keys: int) -> None:
    server = ensure_server(data_dir)
    async with Redis.from_url(server.url) as r:
        for start in range(0, keys, 1000):
            pipe = r.pipeline(transaction=False)
            for i in range(start, min(keys, start + 1000)):
                pipe.hset(f"hitl:{{req:{i}}}", mapping={"state": "pending_review", "n": i})
            await pipe.execute()


def bare_restart(data_dir: Path) -> float:
    kill_server(data_dir)
    t0 = time.perf_counter()
    ensure_server(data_dir)
    return time.perf_counter() - t0


async def supervised_restart(data_dir: Path, users: int) -> tuple[float, float]:
    old = kill_server(data_dir)
    t0 = time.perf_counter()
    while ping_socket(data_dir / "valkey.sock") is not Liveness.READY:
        await asyncio.sleep(0.005)
    answered = time.perf_counter() - t0
    while True:
        found = await status(data_dir)
        if found.pid != old and len(found.users) == users:
            return answered, time.perf_counter() - t0
        await asyncio.sleep(0.005)


async def main(args: argparse.Namespace) -> None:
    print_load()
    data_dir = Path(tempfile.mkdtemp(prefix="hb", dir="/tmp")).resolve()
    procs: list[subprocess.Popen[str]] = []
    try:
        await fill(data_dir, args.keys)
        bare = [bare_restart(data_dir) for _ in range(args.kills)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for _ in range(args.users):
            proc = subprocess.Popen(
                [sys.executable, "-c", USER, str(data_dir)],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            procs.append(proc)
        answered, registered = [], []
        for _ in range(args.kills):
            a, r = await supervised_restart(data_dir, args.users)
            answered.append(a)
            registered.append(r)
            await asyncio.sleep(0.3)  # let every watcher settle before the next kill
        keys = (await status(data_dir)).keys
        print(f"{args.keys} keys in the append-only file ({keys} after {2 * args.kills} kills)")
        for name, xs in (
            ("bare restart by hand (baseline)", bare),
            ("supervised: a server answers again", answered),
            (f"supervised: all {args.users} users registered again", registered),
        ):
            print(f"{name}: median {statistics.median(xs):.3f} s, max {max(xs):.3f} s")
        worst = max(registered)
        print(verdict("worst recovery after kill -9, seconds", worst, "< 3", worst < 3, ".2f"))
        assert keys == args.keys, "keys were lost"
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
        await stop_unused(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--keys", type=int, default=20_000)
    asyncio.run(main(parser.parse_args()))
