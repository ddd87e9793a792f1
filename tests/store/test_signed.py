"""Decisions sealed by serve's key, and claims that take nothing else."""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.config import Settings
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.core.states import Event, State
from bot.deadlines.sweeper import Sweeper
from bot.errors import ConfigError, ForgedDecision
from bot.gate.claims import ClaimCheck, claim_checked
from bot.signing import KEY_FILE, PUB_FILE, load_signer, public_keys
from bot.store import audit, keys
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from tests.support.decisions import approve
from tests.support.keys import other_signer, serve_signer


async def _refund(store: RequestStore, policy: Policy) -> ActionRequest:
    made = await store.create(policy, tool="refund", args={"amount": 5}, requester="agent")
    return made.request


def _approve(req: ActionRequest, actor: str = "U2") -> Decision:
    return approve(req, actor)


def check(policy: Policy) -> ClaimCheck:
    return ClaimCheck(serve_signer().public(), policy)


async def test_a_signed_approval_is_claimed(signed_store: RequestStore, policy: Policy) -> None:
    req = await _refund(signed_store, policy)
    await signed_store.transition(req.id, _approve(req))
    claimed = await claim_checked(signed_store, req.id, actor="exec", check=check(policy))
    assert claimed.state == State.EXECUTING


async def test_an_approval_forged_with_the_stores_own_api_never_runs(
    store: RequestStore, policy: Policy, redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Anything that reaches Redis can write an approval; no executor claims it."""
    req = await _refund(store, policy)
    moved = await store.transition(req.id, _approve(req, "UBOSS"))
    assert moved.request.state == State.APPROVED  # the store takes it; the claim below refuses it
    with (
        caplog.at_level(logging.INFO, logger="bot.store"),
        pytest.raises(ForgedDecision, match="not signed"),
    ):
        await claim_checked(store, req.id, actor="exec", check=check(policy))
    refused = [vars(r) for r in caplog.records if r.getMessage() == "refused"]
    said = [(r["request_id"], r["event"], r["actor"], r["reason"], r["tool"]) for r in refused]
    assert said == [(req.id, "claim", "exec", "forged_decision", "refund")]  # alertable
    after = await store.get(req.id)
    assert after.state == State.APPROVED  # never executing
    last = (await audit.entries(redis, req.id))[-1]
    assert (last.kind, last.event, last.reason_code) == ("refused", "claim", "forged_decision")
    assert last.actor == "exec"
    assert (await audit.verify_request(redis, req.id)) is None  # the refusal is chained


async def test_an_approval_signed_by_another_key_is_refused(
    redis: Redis, clock: FakeClock, policy: Policy
) -> None:
    elsewhere = RequestStore(redis, clock=clock, signer=other_signer())
    req = await _refund(elsewhere, policy)
    await elsewhere.transition(req.id, _approve(req))
    with pytest.raises(ForgedDecision):
        await claim_checked(elsewhere, req.id, actor="exec", check=check(policy))


async def test_an_old_seal_does_not_approve_a_later_version(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = await _refund(signed_store, policy)
    await signed_store.transition(req.id, _approve(req))
    # someone bumps the version behind the scripts' back, the seal left as it was
    await redis.hincrby(keys.request(req.id), "version", 1)
    with pytest.raises(ForgedDecision):
        await claim_checked(signed_store, req.id, actor="exec", check=check(policy))


async def test_a_signed_approval_put_back_by_hand_after_it_ran_is_refused(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    """The seal still matches the hash put back (state and version), but the history's
    last move is the call's completion, not the decision: a replay."""
    req = await _refund(signed_store, policy)
    approved = (await signed_store.transition(req.id, _approve(req))).request
    await claim_checked(signed_store, req.id, check=check(policy))
    await signed_store.transition(req.id, Decision(event=Event.SUCCEED, detail="paid"))
    await redis.hset(
        keys.request(req.id), mapping={"state": "approved", "version": approved.version}
    )
    with pytest.raises(ForgedDecision, match="moved on after that decision"):
        await claim_checked(signed_store, req.id, check=check(policy))


async def test_without_a_public_key_an_executor_refuses_to_claim(
    signed_store: RequestStore,
    policy: Policy,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("HITL_SIGNING_KEY")
    monkeypatch.setenv("HITL_DATA_DIR", str(tmp_path))  # no signing.pub there (yet)
    req = await _refund(signed_store, policy)
    await signed_store.transition(req.id, _approve(req))
    check = ClaimCheck(None, policy)
    with pytest.raises(ConfigError, match="HITL_SIGNING_PUBLIC_KEY"):
        await claim_checked(signed_store, req.id, check=check)
    assert (await signed_store.get(req.id)).state == State.APPROVED
    # serve's public key lands in the data dir after all: then the same check claims
    (tmp_path / PUB_FILE).write_text(serve_signer().public_b64())
    assert (await claim_checked(signed_store, req.id, check=check)).state == State.EXECUTING


async def test_a_quorum_needs_every_approval_signed(
    store: RequestStore, signed_store: RequestStore, policy: Policy
) -> None:
    made = await store.create(policy, tool="deploy", args={"v": 1}, requester="agent")
    req = made.request
    await store.transition(req.id, _approve(req, "U1"))  # forged first approval
    moved = await signed_store.transition(req.id, _approve(req, "U2"))  # a real second one
    assert moved.request.state == State.APPROVED
    with pytest.raises(ForgedDecision, match="approval by U1"):
        await claim_checked(signed_store, req.id, check=check(policy))


LOW_AUTO = parse_policy(
    {
        "tiers": {
            tier: {"review_timeout": "10m", "reviewers": {"users": ["UKID"]}, "approvers": ["*"]}
            | ({"on_exhausted": "auto_approved"} if tier == "low" else {})
            for tier in ("low", "medium", "high", "critical")
        },
        "tools": {"note": {"tier": "low"}},
    }
)


async def test_a_keyless_store_leaves_the_auto_approval_to_serve(
    redis: Redis, clock: FakeClock, signed_store: RequestStore
) -> None:
    """An auto-approval made without the key would be refused by every executor for good:
    a sweeper (or a worker ending its own wait) without it leaves it to serve's."""
    keyless = RequestStore(redis, clock=clock, ids=signed_store.ids)
    note = (await keyless.create(LOW_AUTO, tool="note", args={}, requester="a")).request
    refund = (await keyless.create(LOW_AUTO, tool="refund", args={}, requester="a")).request
    clock.advance(11 * 60_000)
    questions = QuestionStore(redis, clock=clock)
    await Sweeper(keyless, questions, clock=clock).sweep_once()
    await Sweeper(keyless, questions, clock=clock).sweep_once()  # the kept timer is skipped
    timeout = Decision(event=Event.TIMEOUT, fence=note.version)
    assert (await keyless.transition(note.id, timeout)).left
    assert (await keyless.get(note.id)).state == State.PENDING_REVIEW
    assert (await keyless.get(refund.id)).state == State.AUTO_REJECTED  # runs nothing: fired
    await Sweeper(signed_store, questions, clock=clock).sweep_once()
    done = await signed_store.get(note.id)
    assert done.state == State.AUTO_APPROVED and done.resolution is not None
    assert done.resolution.event == Event.TIMEOUT and done.resolution.seal
    claimed = await claim_checked(signed_store, note.id, check=check(LOW_AUTO))
    assert claimed.state == State.EXECUTING
    entries = [json.loads(x) for x in await audit.lines(redis, note.id)]
    assert [e["seal"] for e in entries if e.get("to") == "auto_approved"]
    assert [x async for x in audit.unsealed_all(signed_store, serve_signer().public().verify)] == []


def test_serve_makes_its_key_once_in_the_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("HITL_SIGNING_KEY")
    monkeypatch.setenv("HITL_DATA_DIR", str(tmp_path / "data"))
    first = load_signer(Settings())
    assert (tmp_path / "data" / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert load_signer(Settings()).key_id == first.key_id  # kept, not made again
    trusted = public_keys(Settings())  # an executor sharing the data dir reads signing.pub
    assert trusted is not None and list(trusted.keys) == [first.key_id]
    (tmp_path / "data" / KEY_FILE).chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_signer(Settings())


async def test_a_sealed_auto_rejection_flipped_to_auto_approved_is_refused(
    redis: Redis, clock: FakeClock, signed_store: RequestStore
) -> None:
    refund = (await signed_store.create(LOW_AUTO, tool="refund", args={}, requester="a")).request
    clock.advance(11 * 60_000)
    await Sweeper(signed_store, QuestionStore(redis, clock=clock), clock=clock).sweep_once()
    done = await signed_store.get(refund.id)
    assert done.state == State.AUTO_REJECTED and done.resolution and done.resolution.seal
    await redis.hset(keys.request(refund.id), "state", State.AUTO_APPROVED.value)
    with pytest.raises(ForgedDecision):
        await claim_checked(signed_store, refund.id, check=check(LOW_AUTO))


async def test_one_approval_of_a_quorum_flipped_to_approved_is_refused(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = (await signed_store.create(policy, tool="deploy", args={}, requester="a")).request
    moved = await signed_store.transition(req.id, _approve(req, "U1"))
    assert moved.request.state == State.PENDING_REVIEW
    (one,) = moved.request.approvals
    fields = {"state": "approved", "res_event": "approve", "res_actor": "U1"}
    fields |= {"res_at": str(one.at), "res_seal": one.seal or ""}
    await redis.hset(keys.request(req.id), mapping=fields)
    assert (await signed_store.get(req.id)).resolution is not None
    with pytest.raises(ForgedDecision):
        await claim_checked(signed_store, req.id, check=check(policy))


async def test_a_genuine_quorum_approval_is_claimed(
    signed_store: RequestStore, policy: Policy
) -> None:
    req = (await signed_store.create(policy, tool="deploy", args={}, requester="a")).request
    await signed_store.transition(req.id, _approve(req, "U1"))
    assert (await signed_store.transition(req.id, _approve(req, "U2"))).request.state == "approved"
    claimed = await claim_checked(signed_store, req.id, check=check(policy))
    assert claimed.state == State.EXECUTING


async def test_arguments_swapped_after_a_signed_approval_are_refused(
    signed_store: RequestStore, policy: Policy, redis: Redis
) -> None:
    req = await _refund(signed_store, policy)
    await signed_store.transition(req.id, _approve(req))
    await redis.hset(keys.request(req.id), "args", json.dumps({"amount": 5000}))
    with pytest.raises(ForgedDecision, match="arguments"):
        await claim_checked(signed_store, req.id, check=check(policy))


def _first_start(settings: Settings, start: threading.Barrier) -> str:
    start.wait()
    return load_signer(settings).public_b64()


def test_first_starts_at_once_share_one_whole_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`serve`s started together on a new data dir: one key is made and each reads it
    whole (none finds the file still empty and calls it damaged)."""
    monkeypatch.delenv("HITL_SIGNING_KEY")
    for attempt in range(5):
        settings = Settings(hitl_data_dir=tmp_path / str(attempt))
        start = threading.Barrier(8)
        with ThreadPoolExecutor(8) as pool:
            made = list(pool.map(lambda _: _first_start(settings, start), range(8)))  # noqa: B023
        assert len(set(made)) == 1
        # No temporary file is left behind.
        assert {p.name for p in settings.hitl_data_dir.iterdir()} == {KEY_FILE, PUB_FILE}
