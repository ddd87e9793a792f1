"""Log lines are JSON, carry the transition's fields, and never show a secret."""

from __future__ import annotations

import json
import logging

import pytest

from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.logs import JsonFormatter, mask
from bot.store.requests import RequestStore


def test_secrets_are_masked() -> None:
    line = (
        "token xoxb-1234-abcd and xapp-1-XYZ, header Bearer s3cr3t.t0ken, "
        "url redis://user:hunter2@db:6379/0 and sk-abcdefghijkl"
    )
    out = mask(line)
    for secret in ("xoxb-1234-abcd", "xapp-1-XYZ", "s3cr3t.t0ken", "hunter2", "sk-abcdefghijkl"):
        assert secret not in out
    assert "redis://***@db:6379/0" in out


def test_formatter_writes_one_json_object_with_extras() -> None:
    rec = logging.LogRecord(
        "bot.x", logging.WARNING, __file__, 1, "slack call failed: %s", ("xoxb-9-9",), None
    )
    rec.request_id = "r1"
    data = json.loads(JsonFormatter().format(rec))
    assert data["level"] == "warning" and data["request_id"] == "r1"
    assert "xoxb-9-9" not in data["msg"]


async def test_every_transition_logs_one_structured_line(
    store: RequestStore, policy: Policy, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.store.requests")
    req = (
        await store.create(
            policy, tool="refund", args={"amount": 1}, requester="U1", run_id="run-abc"
        )
    ).request
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    lines = [vars(r) for r in caplog.records if r.getMessage() == "transition"]
    fields = ("event", "from_state", "to_state", "actor", "tool", "run_id")
    assert [tuple(r[f] for f in fields) for r in lines] == [
        ("create", None, "pending_review", "U1", "refund", "run-abc"),
        ("approve", "pending_review", "approved", "U2", "refund", "run-abc"),
    ]
    assert all(r["request_id"] == req.id for r in lines)
