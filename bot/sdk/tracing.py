"""The agent's trace context, sent with each API call (docs/tracing.md).

When the agent process uses OpenTelemetry, the current span's context goes out as a
W3C `traceparent` header, so the request's span on the server is a child of the
agent's tool-call span. OpenTelemetry is imported on the first call, not with
`bot.sdk`, and without it (or with no span active) nothing is sent.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

_inject: Callable[[dict[str, str]], Any] | None = None
_looked = False


def _injector() -> Callable[[dict[str, str]], Any] | None:
    global _inject, _looked
    if not _looked:
        _looked = True
        try:
            _inject = importlib.import_module("opentelemetry.propagate").inject
        except ImportError:  # the agent does not use OpenTelemetry
            _inject = None
    return _inject


def trace_headers() -> dict[str, str]:
    """`traceparent` (and `tracestate`) of the current span; empty without one."""
    inject = _injector()
    if inject is None:
        return {}
    carrier: dict[str, str] = {}
    inject(carrier)
    return {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate")}
