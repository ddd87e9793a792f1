"""Log lines are JSON, carry the transition's fields, and never show a secret."""

from __future__ import annotations

import json
import logging

import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.gate.execution import withdraw
from bot.logs import JsonFormatter, mask
from bot.store.audit import entries
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


async def test_each_step_the_audit_records_is_one_line_whatever_the_path(
    store: RequestStore, policy: Policy, redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """A rejection closes, a withdrawal cancels, a free call is approved by the policy and
    claimed in its create: each step the audit holds is a line, with who took it."""
    caplog.set_level(logging.INFO, logger="bot.store.requests")
    rejected = (
        await store.create(policy, tool="refund", args={"amount": 2}, requester="U1")
    ).request
    reject = Decision(
        event=Event.REJECT, actor="U2", payload_hash=rejected.payload_hash, reason_code="policy"
    )
    await store.transition(rejected.id, reject)
    withdrawn = (
        await store.create(policy, tool="refund", args={"amount": 3}, requester="U1")
    ).request
    await withdraw(store, withdrawn.id, actor="UOPS", reason="run_stopped")
    free = await store.create(policy, tool="move_claw", args={}, requester="U1", claim_as="w1")
    assert free.claimed

    for rid in (rejected.id, withdrawn.id, free.request.id):
        logged = [
            (r.event, r.from_state, r.to_state, r.actor)  # type: ignore[attr-defined]
            for r in caplog.records
            if r.getMessage() == "transition" and getattr(r, "request_id", None) == rid
        ]
        trail = [(e.event, e.from_state, e.to_state, e.actor) for e in await entries(redis, rid)]
        assert logged == trail, rid
    assert [e for e, *_ in trail] == ["create", "approve", "claim"]  # the free call's
    assert [line[0] for line in logged] == ["create", "approve", "claim"]
