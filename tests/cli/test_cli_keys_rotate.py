"""`hitl-bot keys rotate`: a new key signs from then on, and what the old one sealed still
verifies, in `audit verify` and at every executor's claim."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.config import Settings
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.errors import ForgedDecision
from bot.gate.claims import ClaimCheck, claim_checked
from bot.gate.runtime import open_runtime
from bot.signing import KEY_FILE, PREVIOUS_FILE, PUB_FILE, PublicKeys, Signer, load_signer
from bot.store.requests import RequestStore
from tests.cli.test_cli import cli
from tests.support.keys import serve_signer


async def _approved(store: RequestStore, policy: Policy, amount: int) -> ActionRequest:
    req = (
        await store.create(policy, tool="refund", args={"amount": amount}, requester="U1")
    ).request
    decision = Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    return (await store.transition(req.id, decision)).request


async def test_a_rotated_data_dir_key_signs_and_the_old_one_still_verifies(
    redis: Redis,
    redis_url: str,
    clock: FakeClock,
    ids: Callable[[], str],
    policy: Policy,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HITL_SIGNING_KEY")  # serve's key lives in the data dir
    monkeypatch.setenv("HITL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", redis_url)
    old = load_signer(Settings())  # serve's first start makes it
    before_old = await _approved(RequestStore(redis, clock=clock, ids=ids, signer=old), policy, 1)
    after_old = await _approved(RequestStore(redis, clock=clock, ids=ids, signer=old), policy, 2)
    async with open_runtime(Settings(), policy=policy) as started_before:
        code, out, err = await cli("keys", "rotate")
        assert code == 0, err
        assert old.key_id in out and "restart each serve" in out, out
        key = tmp_path / KEY_FILE
        assert key.stat().st_mode & 0o777 == 0o600
        new = load_signer(Settings(), create=False)
        assert new.key_id != old.key_id
        assert (tmp_path / PUB_FILE).read_text().split() == [new.public_b64()]
        assert (tmp_path / PREVIOUS_FILE).read_text().split() == [old.public_b64()]
        signed_new = RequestStore(redis, clock=clock, ids=ids, signer=new)
        before_new = await _approved(signed_new, policy, 3)
        after_new = await _approved(signed_new, policy, 4)

        code, out, err = await cli("audit", "verify")
        assert code == 0, err
        assert "4 requests, every audit chain intact" in out
        code, out, err = await cli("keys", "show")
        assert code == 0, err
        assert [line.split()[0] for line in out.splitlines()] == [new.key_id, old.key_id]

        # An executor that started before the rotation, sharing the data dir, takes both.
        for req in (before_old, before_new):
            claimed = await claim_checked(
                started_before.requests, req.id, actor="exec", check=started_before.claims
            )
            assert claimed.state == State.EXECUTING
    async with open_runtime(Settings(), policy=policy) as started_after:
        for req in (after_old, after_new):
            claimed = await claim_checked(
                started_after.requests, req.id, actor="exec", check=started_after.claims
            )
            assert claimed.state == State.EXECUTING


async def test_rotating_an_environment_key_prints_what_to_set_and_in_which_order(
    signed_store: RequestStore,
    redis: Redis,
    redis_url: str,
    clock: FakeClock,
    ids: Callable[[], str],
    policy: Policy,
    tmp_path: Path,
) -> None:
    code, out, err = await cli("keys", "rotate", env={"HITL_DATA_DIR": str(tmp_path)})
    assert code == 0, err
    assert not list(tmp_path.iterdir())  # HITL_SIGNING_KEY holds the key: nothing written
    said = dict(line.split("=", 1) for line in out.splitlines() if line.startswith("HITL_"))
    seed, public = said["HITL_SIGNING_KEY"], said["HITL_SIGNING_PUBLIC_KEY"]
    new, old = Signer.from_seed(seed), serve_signer()
    assert public == f"{new.public_b64()},{old.public_b64()}"
    assert len(base64.b64decode(seed)) == 32
    steps = out[out.index("in this order") :]
    assert steps.index("every executor and every serve") < steps.index("on each serve")

    sealed_old = await _approved(signed_store, policy, 1)
    sealed_new = await _approved(RequestStore(redis, clock=clock, ids=ids, signer=new), policy, 2)
    rolled = {"HITL_SIGNING_KEY": seed, "HITL_SIGNING_PUBLIC_KEY": public}
    code, out, err = await cli("audit", "verify", redis_url=redis_url, env=rolled)
    assert code == 0, err
    code, out, err = await cli("keys", "show", "--json", env=rolled)
    assert code == 0, err
    shown = json.loads(out)["keys"]
    assert [k["id"] for k in shown] == [new.key_id, old.key_id]
    # Without the old public key, what it sealed no longer verifies: why it is kept.
    code, _, err = await cli("audit", "verify", redis_url=redis_url, env={"HITL_SIGNING_KEY": seed})
    assert code == 1 and f"request {sealed_old.id}: entry 2: approve by U2" in err, err
    assert sealed_new.id not in err

    executor = ClaimCheck(PublicKeys.parse(public), policy)
    for req in (sealed_old, sealed_new):
        claimed = await claim_checked(signed_store, req.id, actor="exec", check=executor)
        assert claimed.state == State.EXECUTING
    only_new = ClaimCheck(new.public(), policy)
    third = await _approved(signed_store, policy, 3)
    with pytest.raises(ForgedDecision):
        await claim_checked(signed_store, third.id, actor="exec", check=only_new)
