"""The trace context of calls that do not come over HTTP: a worker's run, and the SDK
in direct mode. Each request's span is a child of the span its call was made under."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr
from redis.asyncio import Redis

from bot.agent.llm import ChatClient
from bot.agent.loader import Agent, AgentCatalog
from bot.agent.loop import LoopConfig
from bot.agent.tools import tool
from bot.agent.worker import Worker, WorkerConfig
from bot.config import Settings
from bot.core.models import RUN_FINAL
from bot.sandbox.model import after_tool, call, say
from bot.sdk import Gate, require_approval
from bot.telemetry import spans
from tests.agent.conftest import ModelFactory, Stores, scripted, stores
from tests.e2e.conftest import SECRET, TOKEN
from tests.support.poll import eventually
from tests.telemetry.conftest import POLICY, serving
from tests.telemetry.test_traces import approve, review

pytestmark = pytest.mark.timeout(60)
__all__ = ["scripted", "stores"]  # the agent tests' fixtures, used here too


def finished(exporter: InMemorySpanExporter, prefix: str) -> ReadableSpan | None:
    got = [s for s in exporter.get_finished_spans() if s.name.startswith(prefix)]
    return got[0] if got else None


def charging() -> Agent:
    @tool(risk="medium")
    def charge(amount: int) -> str:
        """Charge the customer."""
        return f"charged {amount}"

    return Agent.of("charging", "You charge customers.", [charge])


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


async def test_a_worker_driven_runs_request_is_a_child_of_the_runs_span(
    redis_url: str,
    tmp_path: Path,
    stores: Stores,
    scripted: ModelFactory,
    exporter: InMemorySpanExporter,
) -> None:
    model = await scripted([call("charge", amount=2), say("ok", expect=after_tool("Approved"))])
    tracer = spans.provider(SimpleSpanProcessor(exporter))
    llm = ChatClient(model.base_url, "scripted", backoff_s=0.01)
    worker = Worker(
        stores,
        llm=llm,
        agents=AgentCatalog(known={"charging": charging()}),
        config=WorkerConfig(consumer="A", block_ms=50),
        loop_config=LoopConfig(),
        tracer_provider=tracer,
    )
    stop = asyncio.Event()
    async with serving(redis_url, tmp_path, tracer_provider=tracer):
        working = asyncio.create_task(worker.run(stop))
        try:
            run = await stores.start(agent="charging")
            rid = await stores.waiting_on(run.id)
            await stores.decide(rid)
            await eventually(lambda: stores.runs.get(run.id), lambda r: r.state in RUN_FINAL)
            req_span = await eventually(lambda: finished(exporter, "hitl.approval"))
            run_span = await eventually(lambda: finished(exporter, "hitl.run"))
        finally:
            stop.set()
            await asyncio.wait_for(working, 10)
            await llm.aclose()
    assert dict(run_span.attributes or {})["hitl.run.id"] == run.id
    # one trace: the run's span, and the request its call filed as its child
    assert req_span.context.trace_id == run_span.context.trace_id
    assert req_span.parent is not None and req_span.parent.span_id == run_span.context.span_id
    assert dict(req_span.attributes or {})["hitl.run.id"] == run.id


async def test_a_direct_mode_call_is_a_child_of_the_agents_span(
    redis: Redis, redis_url: str, tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    agent = TracerProvider()
    agent.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(
        slack_bot_token=SecretStr(TOKEN),
        slack_signing_secret=SecretStr(SECRET),
        redis_url=SecretStr(redis_url),
        hitl_data_dir=tmp_path / "agent",
    )
    tracer = spans.provider(SimpleSpanProcessor(exporter))
    async with serving(redis_url, tmp_path, tracer_provider=tracer):
        gate = Gate(settings=settings, policy=POLICY)
        assert gate.mode == "direct"

        async def refund(order: str, amount: int = 40) -> str:
            return f"refunded {amount} on {order}"

        gated = require_approval(gate, tool="refund")(refund)
        reviewing = asyncio.create_task(review(redis, approve))
        try:
            with agent.get_tracer("agent").start_as_current_span("execute_tool refund") as span:
                out: Any = await gated("A1")
        finally:
            await gate.aclose()
        await reviewing
        req_span = await eventually(lambda: finished(exporter, "hitl.approval"))
    assert out == "refunded 40 on A1"
    assert req_span.context.trace_id == span.get_span_context().trace_id
    assert req_span.parent is not None
    assert req_span.parent.span_id == span.get_span_context().span_id
