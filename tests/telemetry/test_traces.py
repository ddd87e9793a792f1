"""An agent's traced call through the SDK: the wait for a person shows inside the
agent's own trace, as the request's span with one event per transition."""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from redis.asyncio import Redis

from bot.sdk import Gate, Rejected, require_approval
from bot.telemetry import spans
from tests.e2e.conftest import POLICY as E2E_POLICY
from tests.support import decisions
from tests.support.poll import eventually
from tests.telemetry.conftest import API_TOKEN, serving, store

pytestmark = pytest.mark.timeout(60)


approve = partial(decisions.approve, actor="UREV")
reject = partial(decisions.reject, actor="UREV")


async def review(redis: Redis, decide: Any) -> None:
    """A person decides the next request in review, as a click in Slack would."""
    s = store(redis)
    req = (await eventually(s.list_pending, what="a request in review"))[0]
    await s.transition(req.id, decide(req))


async def refund_in_agent_span(url: str, agent: TracerProvider) -> tuple[Any, str]:
    """The agent's tool-call span around a gated refund; its span and what came back."""
    gate = Gate(api_url=url, api_token=API_TOKEN)

    async def refund(order: str, amount: int = 40) -> str:
        return f"refunded {amount} on {order}"

    gated = require_approval(gate, tool="refund")(refund)
    try:
        with agent.get_tracer("agent").start_as_current_span("execute_tool refund") as tool:
            try:
                out = await gated("A1")
            except Rejected as exc:
                out = f"rejected: {exc.reason_code}"
    finally:
        await gate.aclose()
    return tool, out


async def hitl_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    def found() -> ReadableSpan | None:
        got = [s for s in exporter.get_finished_spans() if s.name.startswith("hitl.approval")]
        return got[0] if got else None

    return await eventually(found, what="the request's span")


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def agent(exporter: InMemorySpanExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


async def test_the_wait_is_a_child_of_the_agents_tool_span_with_each_transition(
    redis: Redis, redis_url: str, tmp_path: Path, exporter: InMemorySpanExporter, agent: Any
) -> None:
    tracer = spans.provider(SimpleSpanProcessor(exporter))
    async with serving(redis_url, tmp_path, tracer_provider=tracer) as url:
        reviewing = asyncio.create_task(review(redis, approve))
        tool, out = await refund_in_agent_span(url, agent)
        await reviewing
        span = await hitl_span(exporter)
    assert out == "refunded 40 on A1"
    # one trace: the agent's tool-call span, and the request's span as its child
    assert span.context.trace_id == tool.get_span_context().trace_id
    assert span.parent is not None and span.parent.span_id == tool.get_span_context().span_id
    attrs = dict(span.attributes or {})
    assert attrs["hitl.tool.name"] == attrs["gen_ai.tool.name"] == "refund"
    assert attrs["hitl.approval.status"] == "approved"
    assert attrs["hitl.approver.id"] == "UREV"
    assert attrs["hitl.risk.tier"] == "medium"
    assert attrs["hitl.request.state"] == "completed"
    assert attrs["hitl.escalation.level"] == 0
    assert str(attrs["hitl.payload.hash"]).startswith("sha256:") or attrs["hitl.payload.hash"]
    moves = [
        (
            e.attributes["hitl.event"],
            e.attributes.get("hitl.from_state"),
            e.attributes["hitl.to_state"],
        )
        for e in span.events
        if e.attributes is not None and e.name == "hitl.transition"
    ]
    assert moves == [
        ("create", None, "pending_review"),
        ("approve", "pending_review", "approved"),
        ("claim", "approved", "executing"),
        ("succeed", "executing", "completed"),
    ]
    assert span.start_time is not None and span.end_time is not None
    assert span.start_time <= span.events[-1].timestamp <= span.end_time
    assert span.status.status_code != StatusCode.ERROR


async def test_a_rejected_call_still_leaves_its_span_with_the_reason(
    redis: Redis, redis_url: str, tmp_path: Path, exporter: InMemorySpanExporter, agent: Any
) -> None:
    tracer = spans.provider(SimpleSpanProcessor(exporter))
    async with serving(redis_url, tmp_path, tracer_provider=tracer) as url:
        reviewing = asyncio.create_task(review(redis, reject))
        tool, out = await refund_in_agent_span(url, agent)
        await reviewing
        span = await hitl_span(exporter)
    assert out == "rejected: too_risky"
    assert span.parent is not None and span.parent.span_id == tool.get_span_context().span_id
    attrs = dict(span.attributes or {})
    assert attrs["hitl.approval.status"] == "rejected"
    assert attrs["hitl.reason_code"] == "too_risky"
    assert span.status.status_code == StatusCode.ERROR
    assert "too_risky" in (span.status.description or "")
    reasons = [e.attributes.get("hitl.reason_code") for e in span.events if e.attributes]
    assert "too_risky" in reasons


async def test_a_timed_out_call_still_leaves_its_span_with_the_safe_default(
    redis: Redis, redis_url: str, tmp_path: Path, exporter: InMemorySpanExporter, agent: Any
) -> None:
    """Nobody decides: the sweeper applies the tier's default (reject), the agent is told
    it timed out, and the trace still holds the wait, ended as auto_rejected. (`redis`
    empties the store first: a final request an earlier test left in the event streams
    would have its own span read first.)"""
    policy = copy.deepcopy(E2E_POLICY)
    policy["tiers"]["medium"].update(review_timeout="1s", escalation=[])
    tracer = spans.provider(SimpleSpanProcessor(exporter))
    async with serving(redis_url, tmp_path, tracer_provider=tracer, policy=policy) as url:
        tool, out = await refund_in_agent_span(url, agent)
        span = await hitl_span(exporter)
    assert out.startswith("rejected: ")  # TimedOut is a Rejected: the call did not run
    assert span.parent is not None and span.parent.span_id == tool.get_span_context().span_id
    attrs = dict(span.attributes or {})
    assert attrs["hitl.approval.status"] == "auto_rejected"
    assert span.status.status_code == StatusCode.ERROR
    moves = [e.attributes.get("hitl.event") for e in span.events if e.attributes]
    assert "timeout" in moves


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: decodes each protobuf POST and keeps the span names."""

    names: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                type(self).names.extend(s.name for s in ss.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[str]]]:
    Collector.names = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", Collector.names
    finally:
        server.shutdown()
        server.server_close()


async def test_spans_arrive_over_the_real_otlp_exporter(
    redis: Redis,
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    collector: tuple[str, list[str]],
    agent: Any,
) -> None:
    endpoint, names = collector
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)  # the standard variables only
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    async with serving(redis_url, tmp_path) as url:
        reviewing = asyncio.create_task(review(redis, approve))
        await refund_in_agent_span(url, agent)
        await reviewing
        await eventually(lambda: "hitl.approval refund" in names, what="the span over OTLP")
