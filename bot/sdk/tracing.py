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

# the OpenTelemetry API's current-span getter, looked up once; None without OTel
_get_current_span: Callable[[], Any] | None = None
_looked = False


def _current() -> Any:
    """The current span's context when it is valid; None without one (the common
    untraced call then builds nothing at all)."""
    global _get_current_span, _looked
    if not _looked:
        _looked = True
        try:
            _get_current_span = importlib.import_module("opentelemetry.trace").get_current_span
        except ImportError:  # the agent does not use OpenTelemetry
            _get_current_span = None
    if _get_current_span is None:
        return None
    ctx = _get_current_span().get_span_context()
    return ctx if ctx.is_valid else None


def _traceparent(ctx: Any) -> str:
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags) & 1:02x}"


def trace_headers() -> dict[str, str]:
    """`traceparent` (and `tracestate`) of the current span; empty without one.

    Written out here rather than through the global propagator's carrier: the API
    reads the W3C headers only, and this runs on every call."""
    ctx = _current()
    if ctx is None:
        return {}
    out = {"traceparent": _traceparent(ctx)}
    if ctx.trace_state:
        out["tracestate"] = ctx.trace_state.to_header()
    return out


def current_traceparent() -> str | None:
    """The current span as a W3C `traceparent`, as the API stores it; None without one."""
    ctx = _current()
    return None if ctx is None else _traceparent(ctx)
