"""Which events-stream entries become which webhook event, as CloudEvents 1.0 JSON
(structured mode), and their signature (docs/webhooks.md holds its tables to these)."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

from bot.store.stream.events import Notice

SOURCE = "/hitl-bot"
CONTENT_TYPE = "application/cloudevents+json"
TIMESTAMP_HEADER = "X-Hitl-Request-Timestamp"
SIGNATURE_HEADER = "X-Hitl-Signature"
MAX_AGE_S = 300  # a receiver refuses an older timestamp (a replay)

TYPES = (
    "request.created",
    "request.escalated",
    "request.decided",
    "request.executed",
    "request.failed",
    "question.answered",
    "run.stopped",
)


def event_type(n: Notice) -> str | None:
    """The webhook event an entry is, or None for one no webhook hears of."""
    ev, state = n.event, n.state
    if n.kind == "request":
        if ev == "create":
            # a call the policy exempts is created approved: created and decided at once
            return "request.created"
        if ev == "timeout" and state == "pending_review":
            return "request.escalated"
        if ev in ("approve", "edit_and_approve") and state == "approved":
            return "request.decided"
        if ev == "reject" or (ev == "timeout" and state.startswith("auto_")):
            return "request.decided"
        if ev == "succeed":
            return "request.executed"
        if ev == "fail":
            return "request.failed"
        return None
    if n.kind == "question" and state == "answered" and ev not in ("ask", "delivered"):
        return "question.answered"
    if n.kind == "run" and state == "stopped":
        return "run.stopped"
    return None


def event_id(n: Notice) -> str:
    """The same for every delivery of one entry, from any `serve`: what a receiver
    deduplicates on."""
    return hashlib.sha256(f"{n.stream}/{n.entry_id}".encode()).hexdigest()[:32]


def envelope(n: Notice, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    ms = int(n.entry_id.partition("-")[0] or 0)  # the entry's id is when it was written
    at = datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")
    return {
        "specversion": "1.0",
        "id": event_id(n),
        "source": SOURCE,
        "type": kind,
        "subject": n.id,
        "time": at.replace("+00:00", "Z"),
        "datacontenttype": "application/json",
        "data": data,
    }


def body_of(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":"), sort_keys=True).encode()


def sign(secret: bytes, ts: int, body: bytes) -> str:
    """Slack's scheme: v0= HMAC-SHA256 of `v0:{timestamp}:{body}`."""
    mac = hmac.new(secret, b"v0:" + str(ts).encode() + b":" + body, hashlib.sha256)
    return "v0=" + mac.hexdigest()


def verify(secret: bytes, ts_header: str, sig_header: str, body: bytes, now_s: float) -> bool:
    """What a receiver does (docs/webhooks.md shows the same check): a fresh timestamp
    and a matching signature, compared in constant time."""
    if not ts_header.isdigit() or abs(now_s - int(ts_header)) > MAX_AGE_S:
        return False
    return hmac.compare_digest(sign(secret, int(ts_header), body), sig_header)
