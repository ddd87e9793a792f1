"""One decision through the Lua script and through the pure machine, compared.

Compared: the outcome (accepted, repeat, no-op or the refusal's class), the
resulting request, and the audit entries Lua appended (event, from, to and
reason code) against those the machine implies. The refusal's reason code is
read from Lua's own audit entry, never re-derived in Python.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from bot.core.machine import Step, apply
from bot.core.models import ActionRequest, Decision
from bot.core.states import HUMAN_EVENTS, Event
from bot.errors import (
    AlreadyResolved,
    Expired,
    InvalidTransition,
    NotEligible,
    StaleFence,
    StalePayload,
)
from bot.store import audit
from bot.store.requests import RequestStore

# The code Lua writes on a refused human decision, by the machine's error class.
REFUSAL_CODE: dict[type[InvalidTransition], str] = {
    AlreadyResolved: "already_resolved",
    Expired: "expired",
    NotEligible: "not_eligible",
    StalePayload: "stale_payload",
    StaleFence: "stale_fence",
    InvalidTransition: "invalid",
}

Audited = tuple[str, str, str | None, str | None, str | None]  # kind, event, from, to, reason


# Claim tokens a step may claim with: the machine and the script then store the same fence.
TOKENS = ("tokenAAAA1", "tokenBBBB2")


def decision(s: dict[str, Any], req: ActionRequest) -> Decision:
    fence = {"none": None, "current": req.version, "old": req.version - 1}[s["fence"]]
    # What a report holds: no fence, the request's own, or one of a claim superseded since.
    held = {"none": None, "current": req.fence, "stale": f"{req.version}.{TOKENS[1]}x"}[
        s.get("held", "none")
    ]
    return Decision(
        event=s["event"],
        actor=s["actor"],
        actor_groups=s["groups"],
        payload_hash=req.payload_hash if s["hash_ok"] else "f" * 64,
        reason_code=s["reason"],
        new_args=s["edit"],
        fence=fence,
        has_compensation=s["comp"],
        claim_token=s.get("token", TOKENS[0]),
        claim_fence=held,
        detail="d",
        text=s.get("text"),
        # The card a person saw is kept with their decision. Only people send one: Lua keeps
        # a view hash given with a cancel and the machine drops it, but no caller sends one.
        view_hash="v" * 64 if s["event"] in HUMAN_EVENTS else None,
    )


def comparable(r: ActionRequest) -> tuple[Any, ...]:
    res = r.resolution
    return (
        r.state,
        r.version,
        r.level,
        r.expires_at,
        r.payload_hash,
        r.original_hash,
        r.args,
        r.detail,
        r.fence,
        tuple((a.actor, a.at) for a in r.approvals),
        res and (res.actor, res.at, res.event, res.reason_code, res.text, res.view_hash),
    )


def expected_audit(req: ActionRequest, d: Decision, step: Step) -> list[Audited]:
    """The entries the machine's step implies Lua must append."""
    resolved = step.request.resolution if step.request.resolution != req.resolution else None
    out: list[Audited] = []
    for r in step.records:
        carries = d.event in HUMAN_EVENTS or d.event == Event.CANCEL or r.event == Event.TIMEOUT
        reason = resolved.reason_code if carries and resolved is not None else None
        if d.event == Event.CANCEL:
            reason = d.reason_code  # a cancel's own why is audited even after an approval
        out.append(("transition", r.event.value, r.from_state.value, r.to_state.value, reason))
    return out


def expected_refusal(req: ActionRequest, d: Decision, exc: InvalidTransition) -> list[Audited]:
    if d.event not in HUMAN_EVENTS and not isinstance(exc, StaleFence):
        return []  # only people's refused decisions, and superseded reports, are audited
    code = REFUSAL_CODE[type(exc)]
    return [("refused", d.event.value, req.state.value, req.state.value, code)]


async def compare(
    client: Redis, store: RequestStore, model: ActionRequest, d: Decision, now: int
) -> tuple[ActionRequest, str]:
    """Run `d` both ways; return the request both agree on and what happened (for tables)."""
    before = len(await audit.lines(client, model.id))
    expect: Step | None = None
    expect_err: InvalidTransition | None = None
    try:
        expect = apply(model, d, now)
    except InvalidTransition as exc:
        expect_err = exc
    got_err: type[InvalidTransition] | None = None
    try:
        got = await store.transition(model.id, d)
    except InvalidTransition as exc:
        got, got_err = None, type(exc)
    added: list[Audited] = [
        (e.kind, e.event, e.from_state, e.to_state, e.reason_code or None)
        for e in (await audit.entries(client, model.id))[before:]
    ]
    if expect_err is not None:
        assert got_err is type(expect_err), (d, got_err, expect_err)
        assert added == expected_refusal(model, d, expect_err), (d, added)
        return model, REFUSAL_CODE[type(expect_err)]
    assert expect is not None and got is not None, (d, got_err)
    assert (got.repeat, got.noop) == (expect.repeat, expect.noop), d
    assert comparable(got.request) == comparable(expect.request), d
    assert added == expected_audit(model, d, expect), (d, added)
    outcome = "repeat" if got.repeat else "noop" if got.noop else got.request.state.value
    return got.request, outcome
