"""A span per run the worker drives, so the requests its calls file are its children
and a run's waits for people show in one trace (docs/tracing.md).

Off unless OpenTelemetry is configured, by the same OTEL_* variables `serve` reads
(bot/telemetry/setup.py). The span is a child of the worker process's current span
when it has one (a worker embedded in a traced application).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

SPAN_NAME = "hitl.run"
RUN_ID = "hitl.run.id"


@contextlib.contextmanager
def run_span(tracer_provider: Any, run_id: str) -> Iterator[None]:
    """The run's span, current while the worker drives it; nothing without a provider."""
    if tracer_provider is None:
        yield
        return
    tracer = tracer_provider.get_tracer("hitl-bot.worker")
    with tracer.start_as_current_span(SPAN_NAME, attributes={RUN_ID: run_id}):
        yield
