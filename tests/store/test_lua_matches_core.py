"""The Lua script and the pure machine must agree on every history.

Hypothesis drives random decisions through both, against a real Valkey, and
compares outcome, error class, resulting request and audited moves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.machine import apply
from bot.core.models import ActionRequest, Decision
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.errors import InvalidTransition
from bot.store import audit
from bot.store.requests import RequestStore
from tests.conftest import QUORUM_POLICY

POLICY = parse_policy(QUORUM_POLICY)
CALLS = [
    ("refund", {"amount": 5}),
    ("refund", {"amount": 5000}),
    ("deploy", {"v": 1}),
    ("move_claw", {}),
    ("other", {"x": "y"}),
]

step = st.fixed_dictionaries(
    {
        "event": st.sampled_from(
            [
                e
                for e in Event
                if e
                not in (Event.CREATE, Event.CLOSE, Event.REASSIGN, Event.COMPENSATE, Event.GIVE_UP)
            ]
        ),
        "actor": st.sampled_from(["U1", "U2", "U3", "UBOSS", "UONCALL", "system"]),
        "groups": st.sampled_from([(), ("SFINANCE",)]),
        "hash_ok": st.booleans(),
        "reason": st.sampled_from([None, "too_risky", "bogus"]),
        "edit": st.sampled_from([None, {"amount": 1}]),
        "fence": st.sampled_from(["none", "current", "old"]),
        "advance": st.sampled_from([0, 1, 60_000, 5 * 60_000, 10 * 60_000, 3_600_000]),
        "comp": st.booleans(),
    }
)


def decision(s: dict[str, Any], req: ActionRequest) -> Decision:
    fence = {"none": None, "current": req.version, "old": req.version - 1}[s["fence"]]
    return Decision(
        event=s["event"],
        actor=s["actor"],
        actor_groups=s["groups"],
        payload_hash=req.payload_hash if s["hash_ok"] else "f" * 64,
        reason_code=s["reason"],
        new_args=s["edit"],
        fence=fence,
        has_compensation=s["comp"],
        detail="d",
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
        tuple((a.actor, a.at) for a in r.approvals),
        res and (res.actor, res.at, res.event, res.reason_code),
    )


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(call=st.sampled_from(CALLS), steps=st.lists(step, max_size=12))
def test_lua_and_core_agree(
    loop: asyncio.AbstractEventLoop,
    redis_url: str,
    call: tuple[str, dict[str, Any]],
    steps: list[dict[str, Any]],
) -> None:
    loop.run_until_complete(_run(redis_url, call, steps))


async def _run(url: str, call: tuple[str, dict[str, Any]], steps: list[dict[str, Any]]) -> None:
    client = Redis.from_url(url, decode_responses=True)
    clock = FakeClock()
    store = RequestStore(client, clock=clock)
    try:
        model = (await store.create(POLICY, tool=call[0], args=call[1], requester="U1")).request
        for s in steps:
            clock.advance(s["advance"])
            d = decision(s, model)
            before = len(await audit.entries(client, model.id))
            try:
                expect = apply(model, d, clock.now)
                expect_err = None
            except InvalidTransition as exc:
                expect, expect_err = None, type(exc)
            try:
                got = await store.transition(model.id, d)
                got_err = None
            except InvalidTransition as exc:
                got, got_err = None, type(exc)
            assert got_err == expect_err, (s, got_err, expect_err)
            if expect is None or got is None:
                continue
            assert (got.repeat, got.noop) == (expect.repeat, expect.noop), s
            assert comparable(got.request) == comparable(expect.request), s
            added = [
                e
                for e in (await audit.entries(client, model.id))[before:]
                if e.kind == "transition"
            ]
            assert [(e.event, e.from_state, e.to_state) for e in added] == [
                (r.event.value, r.from_state.value, r.to_state.value) for r in expect.records
            ]
            model = got.request
        assert await audit.verify_request(client, model.id) is None
    finally:
        await client.aclose()
