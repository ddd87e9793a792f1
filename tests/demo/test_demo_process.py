"""`hitl-bot demo` as a person runs it: a process of its own, driven only through the
page's HTTP endpoints, stopped with Ctrl-C, and started again on the same data dir."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.cluster import RedisCluster

from tests.support.clients import CLUSTER
from tests.support.poll import eventually_sync

ROOT = Path(__file__).resolve().parents[2]
PAGE = re.compile(r"Open (http://127\.0\.0\.1:\d+)/")
EXPORT = re.compile(r"export HITL_API_URL=(\S+) HITL_API_TOKEN=(\S+)")
FOUND = re.compile(r"Found (\d+) runs? \((\d+) unfinished\) and (\d+) approval requests?")
# Settings a developer's shell may carry that would point the demo elsewhere.
FOREIGN = ("REDIS_URL", "OPENAI_BASE_URL", "HITL_POLICY", "SLACK_APP_TOKEN", "HITL_API_TOKEN")
PONDER_S = 6
DEMO_S = 15.0  # each step goes through the demo's processes and its scripted model
# HITL_TEST_CLUSTER=1: the demo runs on the session's Valkey Cluster instead (see on_cluster).
STORE_ENV: dict[str, str] = {}

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Short and under /tmp: the Valkey socket path must fit in 107 bytes.
    path = Path(tempfile.mkdtemp(prefix="hd", dir="/tmp")).resolve()
    try:
        yield path
    finally:
        for pid in valkeys(path):  # only after a failure: the test asserts there are none
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def on_cluster(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if not CLUSTER:
        return  # the embedded Valkey, started and stopped by the demo itself
    url = request.getfixturevalue("redis_url")
    with RedisCluster.from_url(url) as client:
        client.flushall()
    monkeypatch.setitem(STORE_ENV, "REDIS_URL", url)


def env_for(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN}
    return env | {"HITL_DATA_DIR": str(data_dir)} | STORE_ENV


def valkeys(data_dir: Path) -> list[int]:
    """valkey-server processes serving `data_dir` (valkey runs with its data dir as cwd)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if "valkey" in (proc / "comm").read_text() and os.readlink(proc / "cwd") == str(
                data_dir
            ):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@dataclass
class Demo:
    proc: subprocess.Popen[bytes]
    out: Path
    err: Path
    url: str = ""

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=30)


def start_demo(data_dir: Path, logs: Path, name: str, *options: str) -> Demo:
    out, err = logs / f"{name}.out", logs / f"{name}.err"
    # Files, not pipes: nobody has to keep reading them for the demo to go on.
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "demo", "--port", "0", *options],
            stdout=o,
            stderr=e,
            cwd=ROOT,
            env=env_for(data_dir),
        )
    demo = Demo(proc, out, err)

    def page() -> str | None:
        if proc.poll() is not None:
            raise AssertionError(f"the demo exited {proc.returncode}:\n{err.read_text()}")
        found = PAGE.search(demo.text())
        return found.group(1) if found else None

    demo.url = eventually_sync(page, what="page address in the demo's output", timeout_s=30)
    return demo


def hitl(data_dir: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=env_for(data_dir),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def approve_button(message: dict[str, Any]) -> str | None:
    for block in message.get("blocks") or []:
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("action_id") == "hitl_approve":
                return str(element["value"])
    return None


def one_approval(page: httpx.Client) -> str:
    """As kid: ask for the bear, answer "yes"; kid's own click is refused, parent approves;
    the request id."""
    posted = page.post(
        "/_emu/post",
        json={"user": "UKID", "channel": "#general", "text": "<@UBOT> Get me the bear!"},
    ).json()
    channel, home = posted["channel"], posted["ts"]

    def reply(match: Callable[[dict[str, Any]], Any]) -> dict[str, Any] | None:
        state = page.get("/_emu/state").json()
        chan = next(c for c in state["channels"] if c["id"] == channel)
        thread = next(m for m in chan["messages"] if m["ts"] == home)["replies"]
        return next((m for m in thread if match(m)), None)

    eventually_sync(
        lambda: reply(lambda m: "Is this the one?" in json.dumps(m)),
        what="question",
        timeout_s=DEMO_S,
    )
    answer = {"user": "UKID", "channel": channel, "text": "yes", "thread_ts": home}
    assert page.post("/_emu/post", json=answer).json()["statuses"] == [200]

    def card() -> dict[str, Any] | None:  # in the review channel; the thread links to it
        state = page.get("/_emu/state").json()
        review = next(c for c in state["channels"] if c["name"] == "hitl-approvals")
        return next((m for m in review["messages"] if approve_button(m)), None)

    approval = eventually_sync(card, what="drop_claw approval", timeout_s=DEMO_S)
    assert "drop_claw" in json.dumps(approval)
    eventually_sync(
        lambda: reply(lambda m: "waits for review" in m["text"]),
        what="link to the card",
        timeout_s=DEMO_S,
    )
    # A person takes their time: longer than any client-side read timeout (redis-py's
    # default is 5 s) that would cut the worker's wait short and delay the run by 30 s.
    time.sleep(PONDER_S)
    where = approval["channel"]
    click = {"user": "UKID", "action_id": "hitl_approve", "channel": where, "ts": approval["ts"]}
    assert page.post("/_emu/click", json=click).json()["status"] == 200

    def refused() -> bool:  # the ephemeral is sent after the click's ack
        told = [e["text"] for e in page.get("/_emu/state").json()["ephemerals"]]
        return any("asked for by you" in t and "<@UPARENT>" in t for t in told)

    eventually_sync(refused, what="the refusal, naming who may decide", timeout_s=DEMO_S)
    click["user"] = "UPARENT"
    assert page.post("/_emu/click", json=click).json()["status"] == 200
    eventually_sync(
        lambda: reply(lambda m: "Got it" in m["text"]), what="final reply", timeout_s=DEMO_S
    )
    return str(approve_button(approval)).split(":")[0]


def test_demo_runs_stops_cleanly_and_keeps_everything(data_dir: Path, tmp_path: Path) -> None:
    first = start_demo(data_dir, tmp_path, "first")
    try:
        assert "The store is empty" in first.text()
        with httpx.Client(base_url=first.url, timeout=15) as page:
            assert "Slack emulator" in page.get("/").text
            request_id = one_approval(page)
        assert first.stop() == 0, first.err.read_text()
    finally:
        first.proc.kill()
    assert "Stopped. 1 run and 3 approval requests are kept" in first.text()
    assert valkeys(data_dir) == [] and not (data_dir / "valkey.pid").exists()

    second = start_demo(data_dir, tmp_path, "second")
    try:
        found = FOUND.search(second.text())
        assert found is not None, second.text()
        # Two free moves (approved by the policy, still audited) and the approved drop.
        assert found.groups() == ("1", "0", "3")
        assert second.stop() == 0, second.err.read_text()
    finally:
        second.proc.kill()
    assert valkeys(data_dir) == []

    assert "3 requests, every audit chain intact." in hitl(data_dir, "audit", "verify")
    shown = json.loads(hitl(data_dir, "show", request_id, "--json"))
    assert (shown["tool"], shown["state"], shown["chain"]) == ("drop_claw", "completed", "intact")
    approvals = [e for e in shown["audit"] if e["event"] == "approve" and e["kind"] == "transition"]
    assert [e["actor"] for e in approvals] == ["UPARENT"]
    assert valkeys(data_dir) == []

    # The demo's log: one JSON object a line; each transition names its request, event,
    # states, actor, tool and run.
    log = [json.loads(line) for line in (data_dir / "demo.log").read_text().splitlines()]
    moves = [e for e in log if e["msg"] == "transition" and e["request_id"] == request_id]
    approved = next(e for e in moves if e["event"] == "approve")
    assert (approved["from_state"], approved["to_state"]) == ("pending_review", "approved")
    assert (approved["actor"], approved["tool"]) == ("UPARENT", "drop_claw")
    assert approved["run_id"].startswith("run")


def exported(demo: Demo) -> tuple[str, str]:
    """The API address and token the demo told its user to export."""
    found = eventually_sync(lambda: EXPORT.search(demo.text()), what="the export line")
    return found.group(1), found.group(2)


def test_a_restart_keeps_the_api_address_and_token(data_dir: Path, tmp_path: Path) -> None:
    first = start_demo(data_dir, tmp_path, "first")
    try:
        url, token = exported(first)
        # A kept-alive connection the demo closes as it stops leaves its port in TIME_WAIT,
        # as using the page does (the emulator's deliveries to the bot).
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as api:
            assert api.get("/v1/approvals/nothing").status_code == 404
            assert first.stop() == 0, first.err.read_text()
    finally:
        first.proc.kill()

    second = start_demo(data_dir, tmp_path, "second")
    try:
        assert exported(second) == (url, token)  # the lines printed before still work
        assert (data_dir / "demo-api-token").stat().st_mode & 0o777 == 0o600
        assert "is busy" not in second.text()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as api:
            assert api.get("/v1/approvals/nothing").status_code == 404
        assert second.stop() == 0, second.err.read_text()
    finally:
        second.proc.kill()


def test_a_policy_file_that_does_not_load_is_refused_naming_it(tmp_path: Path) -> None:
    missing, unsafe = tmp_path / "missing.yaml", tmp_path / "unsafe.yaml"
    unsafe.write_text("tiers: {low: {review_timeout: 1m, reviewers: {users: [UKID]}}}\n")
    for file, why in ((missing, "cannot read the policy file"), (unsafe, "tiers")):
        done = subprocess.run(
            [sys.executable, "-m", "bot", "demo", "--port", "0", "--policy", str(file)],
            cwd=ROOT,
            env=env_for(tmp_path / "data"),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"error: {file}"), done.stderr
        assert why in done.stderr and "fix:" in done.stderr
        assert "hitl-bot demo is running" not in done.stdout
