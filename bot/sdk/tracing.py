"""The agent's trace context, sent with each call (docs/tracing.md).

When the agent process uses OpenTelemetry, the current span's context goes with each
call: over HTTP as a W3C `traceparent` header, in direct mode (and from the worker's
runs) as the same field the API stores, so the request's span on the server is a child
of the agent's tool-call span. OpenTelemetry is imported on the first call, not with
`bot.sdk`, and without it (or with no span active) nothing is sent.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

_TRACE_KEYS = ("traceparent", "tracestate")
# (the current span's getter, the global propagator's inject), or None without OTel
_otel: tuple[Callable[[], Any], Callable[[dict[str, str]], Any]] | None = None
_looked = False


def _api() -> tuple[Callable[[], Any], Callable[[dict[str, str]], Any]] | None:
    global _otel, _looked
    if not _looked:
        _looked = True
        try:
            trace = importlib.import_module("opentelemetry.trace")
            propagate = importlib.import_module("opentelemetry.propagate")
            _otel = (trace.get_current_span, propagate.inject)
        except ImportError:  # the agent does not use OpenTelemetry
            _otel = None
    return _otel


def _current() -> Any:
    """The current span's context when it is valid; None without one (the common
    untraced call, which then builds no carrier at all)."""
    api = _api()
    if api is None:
        return None
    ctx = api[0]().get_span_context()
    return ctx if ctx.is_valid else None


def trace_headers() -> dict[str, str]:
    """`traceparent` (and `tracestate`) of the current span; empty without one."""
    api = _api()
    if api is None or _current() is None:
        return {}
    carrier: dict[str, str] = {}
    api[1](carrier)
    return {k: v for k, v in carrier.items() if k in _TRACE_KEYS}


def current_traceparent() -> str | None:
    """The current span as a W3C `traceparent`, as the API stores it; None without one."""
    ctx = _current()
    if ctx is None:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags) & 1:02x}"
