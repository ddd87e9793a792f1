"""Standing approvals in the store: a grant's uses are counted atomically, a call inside
it is approved at once by the granter, sealed so an executor claims it, and audited
under the grant; a revoked, expired or used-up grant passes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.grants import Grant, bounds_of, reason_of
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.core.proof.seal import unsealed
from bot.core.states import Event, State
from bot.errors import HitlError
from bot.gate.claims import ClaimCheck, claim_checked
from bot.gate.grant_audit import grant_findings
from bot.gate.grant_pass import pass_if_granted
from bot.store import audit, keys
from bot.store.figures import metrics
from bot.store.grants import GrantStore
from bot.store.requests import RequestStore
from tests.conftest import QUORUM_POLICY
from tests.support.keys import serve_signer

HOUR = 3_600_000


@pytest.fixture
def policy() -> Policy:
    data: dict[str, Any] = copy.deepcopy(QUORUM_POLICY)
    data["tiers"]["medium"]["standing"] = {"max": "1h", "scope": "requester"}
    return parse_policy(data)


@pytest.fixture
def grants(redis: Redis, clock: FakeClock) -> GrantStore:
    return GrantStore(redis, clock=clock, signer=serve_signer())


async def _refund(
    store: RequestStore, policy: Policy, amount: int, to: str = "cust-1", run: str = "run1"
) -> ActionRequest:
    made = await store.create(
        policy, tool="refund", args={"amount": amount, "to": to}, requester="agent", run_id=run
    )
    return made.request


async def _approve(store: RequestStore, req: ActionRequest, by: str) -> None:
    """The person's approval of the source call, as the grant dialog records it first."""
    if req.state != State.PENDING_REVIEW or store.signer is None:
        return
    with contextlib.suppress(HitlError):  # one who may not approve it: the store refuses
        approve = Decision(event=Event.APPROVE, actor=by, payload_hash=req.payload_hash)
        await store.transition(req.id, approve)


async def _grant(
    grants: GrantStore,
    req: ActionRequest,
    clock: FakeClock,
    uses: int = 2,
    by: str = "UAPPROVER",
    store: RequestStore | None = None,
) -> Grant:
    if store is not None:
        await _approve(store, req, by)
    g = Grant(
        id=grants.new_id(),
        tool=req.tool,
        risk=req.risk,
        scope="run",
        requester=req.requester,
        owner=req.owner,
        run_id=req.run_id,
        bounds=bounds_of(req.args),
        uses=uses,
        granted_by=by,
        created_at=clock(),
        expires_at=clock() + HOUR,
        source=req.id,
    )
    return await grants.make(g)


async def test_a_call_inside_a_grant_is_approved_sealed_and_audited_under_it(
    signed_store: RequestStore, grants: GrantStore, policy: Policy, clock: FakeClock
) -> None:
    g = await _grant(grants, await _refund(signed_store, policy, 50), clock, store=signed_store)
    later = await _refund(signed_store, policy, 20)
    passed = await pass_if_granted(signed_store, grants, policy, later)
    assert passed.state == State.APPROVED
    assert passed.resolution is not None
    assert passed.resolution.actor == "UAPPROVER"
    assert passed.resolution.reason_code == reason_of(g.id)
    trail = await audit.entries(signed_store.redis, later.id)
    assert trail[-1].actor == "UAPPROVER" and trail[-1].reason_code == reason_of(g.id)
    assert trail[-1].via == reason_of(g.id)
    claimed = await claim_checked(
        signed_store, later.id, check=ClaimCheck(serve_signer().public(), policy)
    )
    assert claimed.state == State.EXECUTING
    assert (await grants.get(g.id)).left == 1
    assert [e["kind"] for e in await grants.audit(g.id)] == ["granted", "used"]
    # `hitl-bot audit verify` finds the approval under the grant sealed like any other.
    lines = await audit.lines(signed_store.redis, later.id)
    assert unsealed(later.id, lines, serve_signer().public().verify) == []


async def test_out_of_bounds_other_run_and_no_key_pass_nothing(
    signed_store: RequestStore,
    store: RequestStore,
    grants: GrantStore,
    policy: Policy,
    clock: FakeClock,
) -> None:
    g = await _grant(grants, await _refund(signed_store, policy, 50), clock, store=signed_store)
    for req in (
        await _refund(signed_store, policy, 51),
        await _refund(signed_store, policy, 5, to="cust-2"),
        await _refund(signed_store, policy, 5, run="run2"),
    ):
        assert (await pass_if_granted(signed_store, grants, policy, req)).state == (
            State.PENDING_REVIEW
        )
    keyless = await _refund(store, policy, 5)  # a worker without serve's key leaves it
    assert (await pass_if_granted(store, grants, policy, keyless)).state == State.PENDING_REVIEW
    assert (await grants.get(g.id)).left == 2


async def test_expired_revoked_and_used_up_grants_pass_nothing(
    signed_store: RequestStore, grants: GrantStore, policy: Policy, clock: FakeClock
) -> None:
    source = await _refund(signed_store, policy, 50)
    await _grant(grants, source, clock, uses=1, store=signed_store)
    first = await pass_if_granted(
        signed_store, grants, policy, await _refund(signed_store, policy, 5)
    )
    assert first.state == State.APPROVED
    used_up = await _refund(signed_store, policy, 5)
    assert (await pass_if_granted(signed_store, grants, policy, used_up)).state == (
        State.PENDING_REVIEW
    )

    h = await _grant(grants, source, clock, store=signed_store)
    assert await grants.revoke(h.id, "UOPS") == ("ok", "UOPS")
    assert await grants.revoke(h.id, "UOTHER") == ("already", "UOPS")
    revoked = await _refund(signed_store, policy, 5)
    assert (await pass_if_granted(signed_store, grants, policy, revoked)).state == (
        State.PENDING_REVIEW
    )

    await _grant(grants, source, clock, store=signed_store)
    clock.advance(HOUR)
    expired = await _refund(signed_store, policy, 5)
    assert (await pass_if_granted(signed_store, grants, policy, expired)).state == (
        State.PENDING_REVIEW
    )
    assert await grants.live() == []


async def test_concurrent_calls_never_use_a_grant_more_than_it_allows(
    signed_store: RequestStore,
    grants: GrantStore,
    policy: Policy,
    clock: FakeClock,
) -> None:
    source = await _refund(signed_store, policy, 50)
    g = await _grant(grants, source, clock, uses=3, store=signed_store)
    reqs = [await _refund(signed_store, policy, 5) for _ in range(12)]
    got = await asyncio.gather(*(pass_if_granted(signed_store, grants, policy, r) for r in reqs))
    assert sum(r.state == State.APPROVED for r in got) == 3
    assert (await grants.get(g.id)).left == 0
    statuses = await asyncio.gather(*(grants.use(g.id, r.id, "UAPPROVER") for r in reqs))
    assert statuses.count("again") == 3 and statuses.count("used_up") == 9


async def test_a_grant_whose_granter_never_approved_its_source_passes_nothing(
    signed_store: RequestStore, grants: GrantStore, policy: Policy, clock: FakeClock
) -> None:
    # The grant names the requester itself as granter: the store refused that approval,
    # so no use is taken and the call waits for a person.
    source = await _refund(signed_store, policy, 50)
    g = await _grant(grants, source, clock, by="agent", store=signed_store)
    later = await _refund(signed_store, policy, 5)
    got = await pass_if_granted(signed_store, grants, policy, later)
    assert got.state == State.PENDING_REVIEW
    assert (await grants.get(g.id)).left == 2
    assert [e["kind"] for e in await grants.audit(g.id)] == ["granted"]


async def _forge(redis: Redis, grant: Grant, **json_fields: Any) -> None:
    """What a process with store access and no key can do: write a grant record by hand,
    as the grant script would (record, live index), with any fields it likes."""
    doc = {**json.loads(grant.model_dump_json()), **json_fields}
    record, _, _, live, _ = keys.grant_keys(grant.id)
    await redis.hset(record, mapping={"json": json.dumps(doc), "left": 100})
    await redis.hset(record, mapping={"expires_at": grant.expires_at, "revoked_by": ""})
    await redis.zadd(live, {grant.id: grant.expires_at})


async def test_a_grant_written_into_the_store_without_serves_key_passes_nothing(
    redis: Redis,
    signed_store: RequestStore,
    grants: GrantStore,
    policy: Policy,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = await _refund(signed_store, policy, 50, to="attacker-acct")
    await _approve(signed_store, source, "UAPPROVER")
    base = dict(
        tool="refund",
        risk=source.risk,
        scope="requester",
        requester="agent",
        owner=source.owner,
        uses=100,
        granted_by="UAPPROVER",
        created_at=clock(),
        expires_at=clock() + 365 * 24 * HOUR,
        source=source.id,
    )
    wide = {
        "amount": {"kind": "range", "value": 50, "lo": 0, "hi": 999_999},
        "to": {"kind": "eq", "value": "attacker-acct"},
    }
    unsigned = Grant(id="Gforged1", bounds=bounds_of(source.args), **base)  # type: ignore[arg-type]
    await _forge(redis, unsigned, bounds=wide)
    # A real signed grant, its bounds widened by hand afterwards: the seal no longer fits.
    real = await _grant(grants, source, clock, store=signed_store)
    await _forge(redis, real, bounds=wide)
    # Serve's seal taken from one grant and put on another record.
    copied = Grant(id="Gforged2", bounds=bounds_of(source.args), seal=real.seal, **base)  # type: ignore[arg-type]
    await _forge(redis, copied, bounds=wide)
    before = metrics.FORGED["grant"]
    caplog.set_level(logging.ERROR, logger="bot.gate.grant_pass")
    later = await _refund(signed_store, policy, 999, to="attacker-acct")
    got = await pass_if_granted(signed_store, grants, policy, later)
    assert got.state == State.PENDING_REVIEW
    assert [e.kind for e in await audit.entries(redis, later.id)] == ["transition"]  # created
    forged = [r for r in caplog.records if r.getMessage() == "forged_grant"]
    assert {getattr(r, "grant", None) for r in forged} == {"Gforged1", real.id, "Gforged2"}
    assert metrics.FORGED["grant"] - before == 3
    # Nothing was taken from the real grant either.
    assert [e["kind"] for e in await grants.audit(real.id)] == ["granted"]


async def test_a_grant_record_that_does_not_read_as_one_stops_no_other(
    redis: Redis, signed_store: RequestStore, grants: GrantStore, policy: Policy, clock: FakeClock
) -> None:
    source = await _refund(signed_store, policy, 50)
    g = await _grant(grants, source, clock, store=signed_store)
    record, _, _, live, _ = keys.grant_keys("Gjunk")
    await redis.hset(record, mapping={"json": "{not json", "left": "x"})
    await redis.zadd(live, {"Gjunk": clock() + HOUR})
    later = await _refund(signed_store, policy, 5)
    passed = await pass_if_granted(signed_store, grants, policy, later)
    assert passed.state == State.APPROVED
    assert passed.resolution is not None and passed.resolution.reason_code == reason_of(g.id)


async def test_only_a_store_with_serves_key_makes_grants(
    redis: Redis, signed_store: RequestStore, policy: Policy, clock: FakeClock
) -> None:
    source = await _refund(signed_store, policy, 50)
    with pytest.raises(HitlError, match="signing key"):
        await _grant(GrantStore(redis, clock=clock), source, clock)


async def _findings(store: RequestStore, grants: GrantStore) -> list[str]:
    verify = serve_signer().public().verify
    return [f"{f.request_id} {f.why}" async for f in grant_findings(store, grants, verify)]


async def test_audit_verify_names_every_approval_its_grant_does_not_account_for(
    redis: Redis, signed_store: RequestStore, grants: GrantStore, policy: Policy, clock: FakeClock
) -> None:
    source = await _refund(signed_store, policy, 50)
    g = await _grant(grants, source, clock, uses=1, store=signed_store)
    passed = await pass_if_granted(
        signed_store, grants, policy, await _refund(signed_store, policy, 5)
    )
    assert passed.state == State.APPROVED
    assert await _findings(signed_store, grants) == []  # a real grant's pass is accounted for

    # What the earlier bug left behind: serve sealed approvals under a grant it never made,
    # and one more under the real grant than its uses allow.
    unsigned = Grant(**{**json.loads(g.model_dump_json()), "id": "Gforged", "seal": ""})
    await _forge(redis, unsigned)
    for gid in ("Gforged", "Gmissing", g.id):
        req = await _refund(signed_store, policy, 5)
        approve = Decision(
            event=Event.APPROVE,
            actor="UAPPROVER",
            payload_hash=req.payload_hash,
            reason_code=reason_of(gid),
            via=reason_of(gid),
        )
        await signed_store.transition(req.id, approve)
    found = await _findings(signed_store, grants)
    assert any("grant Gforged is unsigned" in f for f in found), found
    assert any("grant Gmissing is not in the store" in f for f in found), found
    assert any(f"grant {g.id} passed 2 calls, more than its 1 uses" in f for f in found), found
    assert len(found) == 3
