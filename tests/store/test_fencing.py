"""The executor is fenced: a claim hands it `fence` ("<version>.<claim token>"), a retried
claim with the same token gets the same claim back, and a report holding a superseded
claim's fence is refused (`stale_fence`, audited) so the later claim's report stands.

A failover that loses a claim is played by restoring the request's hash, audit and wake
stream from DUMPs taken before it: everything the claim wrote is gone, as on a promoted
replica that never saw it. (The hash alone written back would not do: the executor's
replay check then finds the lost claim after the approval in the audit and refuses every
later claim as forged.) The audit then shows both executors: the second claim, and the
first executor's report refused with the fence its lost claim handed it.
"""

from __future__ import annotations

from typing import cast

import pytest
from redis.asyncio import Redis

from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import AlreadyResolved, StaleFence
from bot.gate import execution
from bot.gate.claims import ClaimCheck, claim_checked
from bot.store import audit, keys
from bot.store.requests import RequestStore
from tests.support.keys import serve_signer

A, B = "tokenA-1234567", "tokenB-7654321"  # two executors' claim tokens


def check(policy: Policy) -> ClaimCheck:
    return ClaimCheck(serve_signer().public(), policy)


async def approved(store: RequestStore, policy: Policy) -> ActionRequest:
    made = await store.create(policy, tool="refund", args={"amount": 5}, requester="agent")
    req = made.request
    approve = Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    return (await store.transition(req.id, approve)).request


def done(fence: str | None, detail: str) -> Decision:
    return Decision(event=Event.SUCCEED, actor="exec", detail=detail, claim_fence=fence)


async def claims(redis: Redis, rid: str) -> list[tuple[str, str | None]]:
    return [(e.actor, e.fence) for e in await audit.entries(redis, rid) if e.event == "claim"]


async def snapshot(redis: Redis, rid: str, *names: str) -> dict[str, bytes | None]:
    """DUMPs of the request's keys by name (bot/store/keys.py REQUEST_KEYS); None for
    one not there (a wake stream exists only once someone waited)."""
    every = dict(zip(keys.REQUEST_KEYS, keys.request_keys(rid), strict=True))
    return {every[n]: cast(bytes | None, await redis.dump(every[n])) for n in names}


async def restore(redis: Redis, dumps: dict[str, bytes | None]) -> None:
    for key, raw in dumps.items():
        if raw is None:  # not there before: whatever made it since is lost too
            await redis.delete(key)
        else:
            await redis.restore(key, 0, raw, replace=True)


async def lost_claim(redis: Redis, rid: str) -> dict[str, bytes | None]:
    """What a failover leaves if the claim never reached the replica: the request's hash,
    audit and wake stream as they stood before it (DUMPs to `restore` once claimed)."""
    return await snapshot(redis, rid, "req", "audit", "wake")


async def test_a_claim_hands_out_its_fence_and_a_retry_gets_the_same_claim(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = await approved(signed_store, policy)
    first = await claim_checked(signed_store, req.id, actor="exec", check=check(policy), token=A)
    assert first.state == State.EXECUTING
    assert first.fence == f"{req.version + 1}.{A}"
    assert (await signed_store.get(req.id)).fence == first.fence  # stored, read back alike
    # The same executor, told 503 (say), claims again with its token: the same claim.
    again = await claim_checked(signed_store, req.id, actor="exec", check=check(policy), token=A)
    assert (again.fence, again.version) == (first.fence, first.version)
    assert await claims(redis, req.id) == [("exec", first.fence)]  # claimed once
    with pytest.raises(AlreadyResolved):
        await claim_checked(signed_store, req.id, actor="other", check=check(policy), token=B)
    assert len(await claims(redis, req.id)) == 1
    assert await audit.verify_request(redis, req.id) is None


async def test_a_claim_without_a_token_still_gets_a_fence(
    signed_store: RequestStore, policy: Policy
) -> None:
    req = await approved(signed_store, policy)
    got = await claim_checked(signed_store, req.id, actor="exec", check=check(policy))
    version, token = (got.fence or "").split(".", 1)
    assert int(version) == got.version and len(token) >= 16


async def test_a_free_call_claimed_at_create_has_a_fence(
    signed_store: RequestStore, policy: Policy
) -> None:
    made = await signed_store.create(
        policy, tool="move_claw", args={}, requester="agent", claim_as="exec", claim_token=A
    )
    assert made.claimed and made.request.fence == f"{made.request.version}.{A}"
    assert (await signed_store.get(made.request.id)).fence == made.request.fence


async def test_a_report_with_a_superseded_fence_is_refused_and_audited(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = await approved(signed_store, policy)
    before = await lost_claim(redis, req.id)
    first = await claim_checked(signed_store, req.id, actor="exec-a", check=check(policy), token=A)
    await restore(redis, before)
    second = await claim_checked(signed_store, req.id, actor="exec-b", check=check(policy), token=B)
    # The version alone would not tell the two claims apart: both moved v to v + 1.
    assert first.version == second.version and first.fence != second.fence

    with pytest.raises(StaleFence, match="claimed again by another executor") as refused:
        await signed_store.transition(req.id, done(first.fence, "A ran it"))
    assert refused.value.state == State.EXECUTING.value
    assert first.fence in str(refused.value) and (second.fence or "") not in str(refused.value)
    assert (await signed_store.get(req.id)).state == State.EXECUTING  # nothing changed
    moved = await signed_store.transition(req.id, done(second.fence, "B ran it"))
    assert moved.request.state == State.COMPLETED and moved.request.detail == "B ran it"
    # Once B's report stands, A's (now or later) still does not overwrite it.
    with pytest.raises(StaleFence):
        await signed_store.advance(req.id, done(first.fence, "A again"))
    assert (await signed_store.get(req.id)).detail == "B ran it"

    assert await claims(redis, req.id) == [("exec-b", second.fence)]  # A's went with the primary
    stale = [e for e in await audit.entries(redis, req.id) if e.reason_code == "stale_fence"]
    assert [(e.kind, e.event, e.actor, e.text, e.fence) for e in stale] == [
        ("refused", "succeed", "exec", "A ran it", first.fence),
        ("refused", "succeed", "exec", "A again", first.fence),
    ]
    assert (stale[0].from_state, stale[1].from_state) == ("executing", "completed")
    assert await audit.verify_request(redis, req.id) is None


async def test_a_claim_lost_with_everything_it_wrote(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """As on a promoted replica that never saw the claim: hash and audit from before it."""
    req = await approved(signed_store, policy)
    before = await lost_claim(redis, req.id)
    first = await claim_checked(signed_store, req.id, actor="exec-a", check=check(policy), token=A)
    await restore(redis, before)
    assert (await signed_store.get(req.id)).state == State.APPROVED
    second = await claim_checked(signed_store, req.id, actor="exec-b", check=check(policy), token=B)
    with pytest.raises(StaleFence):
        await execution.report(
            signed_store,
            req.id,
            ok=True,
            detail="A ran it",
            compensated=None,
            actor="exec-a",
            check=check(policy),
            fence=first.fence,
        )
    got = await execution.report(
        signed_store,
        req.id,
        ok=True,
        detail="B ran it",
        compensated=None,
        actor="exec-b",
        check=check(policy),
        fence=second.fence,
    )
    assert got.state == State.COMPLETED and got.detail == "B ran it"
    entries = await audit.entries(redis, req.id)
    seen = [(e.kind, e.event, e.actor, e.fence) for e in entries if e.event != "create"]
    assert seen[-3:] == [
        ("transition", "claim", "exec-b", second.fence),
        ("refused", "succeed", "exec-a", first.fence),  # A's claim, told by its report
        ("transition", "succeed", "exec-b", None),
    ]
    assert await audit.verify_request(redis, req.id) is None


async def test_a_lost_claim_nobody_took_since_is_taken_back_by_its_report(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """The call ran; its claim was lost and the request stands approved again: its
    report claims it back with the same token (the same fence), so nobody runs it twice."""
    req = await approved(signed_store, policy)
    before = await lost_claim(redis, req.id)
    first = await claim_checked(signed_store, req.id, actor="exec", check=check(policy), token=A)
    await restore(redis, before)
    state = await execution.report_executed(
        signed_store,
        req.id,
        ok=True,
        detail="ran",
        compensated=None,
        actor="exec",
        fence=first.fence,
        check=check(policy),
    )
    assert state == State.COMPLETED
    after = await signed_store.get(req.id)
    assert after.fence == first.fence and after.detail == "ran"
    with pytest.raises(AlreadyResolved):
        await claim_checked(signed_store, req.id, actor="other", check=check(policy), token=B)


async def test_a_report_without_a_fence_is_accepted_as_before(
    signed_store: RequestStore, policy: Policy
) -> None:
    req = await approved(signed_store, policy)
    await claim_checked(signed_store, req.id, actor="exec", check=check(policy), token=A)
    moved = await signed_store.transition(req.id, done(None, "ok"))
    assert moved.request.state == State.COMPLETED


async def test_the_fence_holds_down_the_rollback_path(
    signed_store: RequestStore, policy: Policy
) -> None:
    req = await approved(signed_store, policy)
    got = await claim_checked(signed_store, req.id, actor="exec", check=check(policy), token=A)
    fail = Decision(event=Event.FAIL, detail="500", has_compensation=True, claim_fence=got.fence)
    assert (await signed_store.transition(req.id, fail)).request.state == State.ROLLBACK_PENDING
    stale = Decision(event=Event.ROLLBACK_OK, claim_fence=f"{got.version}.{B}")
    with pytest.raises(StaleFence):
        await signed_store.transition(req.id, stale)
    undone = Decision(event=Event.ROLLBACK_OK, detail="undone", claim_fence=got.fence)
    assert (await signed_store.transition(req.id, undone)).request.state == State.ROLLED_BACK
