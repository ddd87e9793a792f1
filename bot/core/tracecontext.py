"""W3C Trace Context: the `traceparent` an agent sends, and the ids of a request's span.

A request's span is emitted once, when the request reaches a final state, by whichever
`serve` sees that transition (bot/telemetry/spans.py). Its ids are derived from the
request id, so any process (and a restarted one) emits the same span, and nothing about
it needs to live in memory while a person takes their time.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["Parent", "canonical", "parse_traceparent", "request_span_id", "request_trace_id"]

# version 00 as the W3C spec writes it; a later version keeps these four fields first
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16


@dataclass(frozen=True)
class Parent:
    """The caller's span: the request's span is its child."""

    trace_id: int
    span_id: int
    sampled: bool


def parse_traceparent(value: str | None) -> Parent | None:
    """The caller's span, or None for a header that is absent or invalid (the spec says
    to ignore an invalid one: the request then starts a trace of its own)."""
    if not value:
        return None
    m = _TRACEPARENT.match(value.strip().lower())
    if m is None or m[1] == "ff" or m[2] == _ZERO_TRACE or m[3] == _ZERO_SPAN:
        return None
    if m[1] == "00" and len(value.strip()) != 55:
        return None
    return Parent(int(m[2], 16), int(m[3], 16), bool(int(m[4], 16) & 1))


def canonical(value: str | None) -> str | None:
    """The header as stored on the request: the four fields only, or None."""
    p = parse_traceparent(value)
    if p is None:
        return None
    return f"00-{p.trace_id:032x}-{p.span_id:016x}-{'01' if p.sampled else '00'}"


def _digest(kind: str, rid: str) -> bytes:
    return hashlib.sha256(f"{kind}:{rid}".encode()).digest()


def request_span_id(rid: str) -> int:
    """The request's span id: the same in every process."""
    return int.from_bytes(_digest("span", rid)[:8], "big") or 1


def request_trace_id(rid: str) -> int:
    """The trace id of a request no traced caller filed: a trace of its own."""
    return int.from_bytes(_digest("trace", rid)[:16], "big") or 1
