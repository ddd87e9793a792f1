"""A request's span, emitted once when it reaches a final state.

The span covers the request from its creation to its final state, which may be hours
and several `serve` restarts later, so no span is held open in memory: `serve` reads
the events stream through a group of its own (bot/store/stream/group_reader.py) and, at a
final transition, builds the whole span at once from the record: start = created_at,
end = the final audit entry's time, one event per audit entry, the caller's
`traceparent` (stored at create) as parent, and ids derived from the request id
(bot/core/tracecontext.py) so a retry emits the same span.
"""

from __future__ import annotations

import contextvars
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.trace import TraceFlags as Flags

from bot.core.models import ActionRequest, AuditEntry
from bot.core.states import FINAL, State
from bot.core.tracecontext import parse_traceparent, request_span_id, request_trace_id
from bot.gate.runtime import Runtime
from bot.store.stream.events import Notice
from bot.telemetry import attributes as a

GROUP = "traces"  # the emitter's consumer group on every shard's events stream
DEAD_METRIC = "hitl_trace_dead_letters_total"
# The emitter reads the events at most this often: a span is built from the record
# whenever it is read, and the batch processor exports every few seconds anyway, so a
# span waits unseen; taking many calls' entries per read keeps it off the calls' time.
PACE_MS = 250
_MS = 1_000_000  # ns per ms
_IDS: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
    "hitl_span_ids", default=None
)
# A call that did not run as asked: its span's status is an error, with the reason.
_NOT_RUN = {"rejected", "auto_rejected", "cancelled", "manual_intervention", "rolled_back"}


class RequestIds(IdGenerator):
    """The request's own ids while its span is built; random ones otherwise."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()

    def generate_span_id(self) -> int:
        ids = _IDS.get()
        return ids[1] if ids else self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        ids = _IDS.get()
        return ids[0] if ids else self._random.generate_trace_id()


def provider(*processors: SpanProcessor, resource: Any = None) -> TracerProvider:
    """A TracerProvider that can emit a request's span under its derived ids. The
    sampler, resource and limits come from the OTEL_* variables, as the SDK reads them."""
    made = TracerProvider(id_generator=RequestIds(), resource=resource)
    for p in processors:
        made.add_span_processor(p)
    return made


def status_of(req: ActionRequest) -> str:
    """The approval's outcome, as `hitl.approval.status` reports it."""
    res = req.resolution
    if res is None:
        return "cancelled" if req.state == State.CANCELLED else "none"
    if res.event.value in ("approve", "edit_and_approve"):
        return "approved"
    if res.event.value == "reject":
        return "rejected"
    if res.event.value == "timeout":
        return "auto_rejected" if req.state == State.AUTO_REJECTED else "auto_approved"
    if res.event.value == "create":  # exempt from review by the policy
        return "auto_approved"
    return res.event.value


def emit(tp: TracerProvider, req: ActionRequest, parent: str | None, log: list[AuditEntry]) -> None:
    """Build and end the request's span in one go."""
    p = parse_traceparent(parent)
    ctx = None
    trace_id = request_trace_id(req.id)
    if p is not None:
        trace_id = p.trace_id
        remote = SpanContext(
            p.trace_id, p.span_id, is_remote=True, trace_flags=Flags(1 if p.sampled else 0)
        )
        ctx = trace.set_span_in_context(NonRecordingSpan(remote))
    res = req.resolution
    status = status_of(req)
    attrs: dict[str, str | int] = {
        a.REQUEST_ID: req.id,
        a.TOOL: req.tool,
        a.GENAI_TOOL: req.tool,
        a.RISK_TIER: req.risk.value,
        a.APPROVAL_STATUS: status,
        a.FINAL_STATE: req.state.value,
        a.PAYLOAD_HASH: req.payload_hash,
        a.ESCALATION_LEVEL: req.level,
        a.REQUESTER: req.requester,
    }
    if res is not None:
        attrs[a.APPROVER_ID] = res.actor
        if res.reason_code:
            attrs[a.REASON_CODE] = res.reason_code
    if req.run_id:
        attrs[a.RUN_ID] = req.run_id
    end_ms = max([req.created_at, *(e.at for e in log)])
    token = _IDS.set((trace_id, request_span_id(req.id)))
    try:
        span = tp.get_tracer("hitl-bot").start_span(
            f"{a.SPAN_NAME} {req.tool}",
            context=ctx,
            kind=SpanKind.INTERNAL,
            attributes=attrs,
            start_time=req.created_at * _MS,
        )
    finally:
        _IDS.reset(token)
    for e in log:
        ev: dict[str, str] = {a.EV_EVENT: e.event, a.EV_ACTOR: e.actor}
        for key, value in ((a.EV_FROM, e.from_state), (a.EV_TO, e.to_state)):
            if value:
                ev[key] = value
        if e.reason_code:
            ev[a.EV_REASON] = e.reason_code
        name = a.TRANSITION if e.kind == "transition" else a.REFUSED
        span.add_event(name, ev, timestamp=e.at * _MS)
    if status in _NOT_RUN or req.state in (State.MANUAL_INTERVENTION, State.ROLLED_BACK):
        why = (res.reason_code if res else None) or req.state.value
        span.set_status(Status(StatusCode.ERROR, f"{status}: {why}"))
    span.end(end_time=end_ms * _MS)


class SpanEmitter:
    """The events-stream handler: a request's final transition emits its span."""

    def __init__(self, rt: Runtime, tp: TracerProvider) -> None:
        self.rt, self.tp = rt, tp

    async def __call__(self, n: Notice) -> bool:
        if n.kind != "request" or n.state not in FINAL:
            return True
        req, parent, log = await self.rt.span_record(n.id)
        if req.state in FINAL:  # always: a final state is never left
            emit(self.tp, req, parent, log)
        return True
