"""Signed CloudEvents to a webhook: each event's fields and signature, exactly one
delivery per event id across two `serve`s and a receiver that fails twice first, a
dead-letter count when it never answers, and the documented stale-timestamp check."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import importlib.util
import json
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.store import keys
from bot.store.stream.group_reader import Retry
from tests.support.poll import eventually
from tests.telemetry.conftest import serving
from tests.telemetry.test_traces import approve, refund_in_agent_span, reject, review

pytestmark = pytest.mark.timeout(90)

SECRET = "whsec-test-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]
FAST = Retry(base_ms=50, max_backoff_ms=200, max_attempts=10, in_flight_ms=4_000)


def example() -> ModuleType:
    """examples/webhook_receiver.py, the receiver docs/webhooks.md shows."""
    spec = importlib.util.spec_from_file_location("receiver", ROOT / "examples/webhook_receiver.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Receiver:
    """Checks every event as a receiver must, refuses the first `fail_first` tries of
    each event id with a 500, and records each accepted delivery."""

    def __init__(self, fail_first: int) -> None:
        self.fail_first = fail_first
        self.tries: Counter[str] = Counter()
        self.delivered: dict[str, list[str]] = defaultdict(list)
        self.problems: list[str] = []
        self.verified = example().verified
        self.lock = threading.Lock()

    def handle(self, headers: Any, body: bytes) -> int:
        ts, sig = headers.get("X-Hitl-Request-Timestamp", ""), headers.get("X-Hitl-Signature", "")
        if not self.verified(SECRET.encode(), ts, sig, body, time.time()):
            self.problems.append("bad signature")
            return 401
        if headers.get("Content-Type") != "application/cloudevents+json":
            self.problems.append(f"content type {headers.get('Content-Type')}")
        ev = json.loads(body)
        for field in ("specversion", "id", "source", "type", "time", "subject", "data"):
            if field not in ev:
                self.problems.append(f"no {field}")
        if ev.get("specversion") != "1.0" or ev.get("datacontenttype") != "application/json":
            self.problems.append("not CloudEvents 1.0 JSON")
        with self.lock:
            self.tries[ev["id"]] += 1
            if self.tries[ev["id"]] <= self.fail_first:
                return 500
            self.delivered[ev["id"]].append(ev["type"])
        return 204

    def types(self) -> Counter[str]:
        return Counter(t for got in list(self.delivered.values()) for t in got)


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[tuple[str, Receiver]]:
    rec = Receiver(getattr(request, "param", 2))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(rec.handle(self.headers, body))
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", rec
    finally:
        server.shutdown()
        server.server_close()


async def pending(redis: Redis, group: str) -> int:
    total = 0
    for s in range(keys.SHARDS):
        try:
            total += int((await redis.xpending(keys.events(s), group))["pending"])
        except Exception:
            continue
    return total


async def test_each_event_is_delivered_signed_once_across_two_serves(
    redis: Redis,
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    receiver: tuple[str, Receiver],
) -> None:
    url, rec = receiver
    monkeypatch.setenv("HITL_WEBHOOK_SECRET_AUDIT", SECRET)
    hooks = {"hitl_webhooks": f"audit={url}"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    from opentelemetry.sdk.trace import TracerProvider

    agent = TracerProvider()
    async with (
        serving(redis_url, tmp_path / "a", settings=hooks, webhook_retry=FAST) as a,
        serving(redis_url, tmp_path / "b", settings=hooks, webhook_retry=FAST) as b,
    ):
        reviewing = asyncio.create_task(review(redis, approve))
        await refund_in_agent_span(a, agent)
        await reviewing
        reviewing = asyncio.create_task(review(redis, reject))
        await refund_in_agent_span(b, agent)
        await reviewing
        want = Counter({"request.created": 2, "request.decided": 2, "request.executed": 1})
        await eventually(lambda: rec.types() == want, what=f"{want} delivered", timeout_s=30)
        await eventually(lambda: pending(redis, "webhook:audit"), ok=lambda n: n == 0)
    assert rec.problems == []
    assert all(len(types) == 1 for types in rec.delivered.values()), rec.delivered
    assert all(n == 3 for n in rec.tries.values()), rec.tries  # two refusals, then taken


@pytest.mark.parametrize("receiver", [1_000], indirect=True)
async def test_an_event_never_taken_is_dead_lettered_and_counted(
    redis: Redis,
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    receiver: tuple[str, Receiver],
) -> None:
    url, rec = receiver
    monkeypatch.setenv("HITL_WEBHOOK_SECRET_AUDIT", SECRET)
    hooks = {"hitl_webhooks": f"audit={url}"}
    retry = Retry(base_ms=20, max_backoff_ms=40, max_attempts=3, in_flight_ms=2_000)
    async with (
        serving(redis_url, tmp_path, settings=hooks, webhook_retry=retry) as served,
        httpx.AsyncClient() as http,
    ):
        made = await http.post(
            served + "/v1/approvals",
            json={"tool": "refund", "args": {"order": "A1"}},
            headers={"Authorization": "Bearer api-token-0123456789"},
        )
        assert made.status_code == 201, made.text

        async def dead() -> str:
            return (await http.get(served + "/metrics")).text

        text = await eventually(
            dead, ok=lambda t: 'hitl_webhook_dead_letters_total{webhook="audit"} 1' in t
        )
    assert "# TYPE hitl_webhook_dead_letters_total counter" in text
    assert list(rec.tries.values()) == [3]
    assert rec.delivered == {}


def test_the_documented_check_refuses_a_stale_timestamp() -> None:
    verified = example().verified
    body = b'{"id":"x"}'
    now = time.time()

    def signed(ts: int) -> str:
        mac = hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256)
        return "v0=" + mac.hexdigest()

    fresh, stale = int(now) - 10, int(now) - 301
    assert verified(SECRET.encode(), str(fresh), signed(fresh), body, now)
    assert not verified(SECRET.encode(), str(stale), signed(stale), body, now)  # a replay
    assert not verified(b"another-secret-0123456", str(fresh), signed(fresh), body, now)
    assert not verified(SECRET.encode(), str(fresh), signed(fresh), body + b" ", now)
    # what serve signs with is what the documented check accepts
    from bot.telemetry.cloudevents import sign

    assert sign(SECRET.encode(), fresh, body) == signed(fresh)


async def test_a_webhook_removed_from_the_settings_no_longer_holds_back_the_trim(
    redis: Redis,
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    receiver: tuple[str, Receiver],
) -> None:
    url, _ = receiver
    monkeypatch.setenv("HITL_WEBHOOK_SECRET_OLD", SECRET)

    async def groups() -> set[str]:
        info = await redis.xinfo_groups(keys.events(0))
        return {str(g["name"]) for g in info}

    async with serving(redis_url, tmp_path, settings={"hitl_webhooks": f"old={url}"}):
        await eventually(groups, ok=lambda g: "webhook:old" in g)
    async with serving(redis_url, tmp_path):
        assert "webhook:old" not in await groups()
