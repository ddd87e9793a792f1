"""`hitl-bot policy check | show` on step-up, and `hitl-bot passkey list | revoke`."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.demo.policy import DEMO_POLICY
from bot.store.passkeys import Credential, PasskeyStore
from bot.store.requests import RequestStore
from tests.cli.test_cli import cli
from tests.conftest import QUORUM_POLICY

NO_URL = {"HITL_PUBLIC_URL": "", "COLUMNS": "200"}


def _policy(tmp_path: Path, *tiers: str) -> Path:
    data = copy.deepcopy(DEMO_POLICY)
    for tier in tiers:
        data["tiers"][tier]["step_up"] = "passkey"
        data["tiers"][tier].pop("standing", None)
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


async def test_policy_check_warns_when_a_click_alone_approves_critical(tmp_path: Path) -> None:
    code, _, err = await cli("policy", "check", str(_policy(tmp_path)), env=NO_URL)
    assert code == 0, err
    assert "critical tier has no step_up" in err


async def test_policy_check_and_show_list_the_step_up(tmp_path: Path) -> None:
    path = _policy(tmp_path, "high", "critical")
    code, out, err = await cli("policy", "check", str(path), env=NO_URL)
    assert code == 0, err
    assert "critical tier has no step_up" not in err
    assert "HITL_PUBLIC_URL" in err  # serve would refuse this policy here
    code, out, err = await cli(
        "policy", "show", str(path), env=NO_URL | {"HITL_PUBLIC_URL": "https://hitl.example.com"}
    )
    assert code == 0, err
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("│ ")}
    assert "passkey" in rows["critical"] and "passkey" in rows["high"]
    assert "passkey" not in rows["low"]


async def test_an_operator_lists_and_revokes_anyones_passkey(redis_url: str, redis: Redis) -> None:
    store = PasskeyStore(redis)
    for user, cid in (("UALICE", "cred-a"), ("UBOB", "cred-b")):
        await store.add(Credential(id=cid, user=user, public_key="pk", created_at=1))
    code, out, err = await cli("passkey", "list", redis_url=redis_url, env=NO_URL)
    assert code == 0, err
    assert "cred-a" in out and "cred-b" in out
    code, out, err = await cli("passkey", "revoke", "UBOB", redis_url=redis_url, env=NO_URL)
    assert code == 0, err
    assert "cred-b" in out
    assert await store.of("UBOB") == [] and await store.revoked("cred-b")
    code, _, _ = await cli("passkey", "revoke", "UBOB", "cred-b", redis_url=redis_url)
    assert code == 1  # nothing left to revoke: said, not silent


async def test_audit_verify_names_an_approval_of_a_step_up_tier_without_a_passkey(
    tmp_path: Path, redis_url: str, redis: Redis, signed_store: RequestStore
) -> None:
    raw = copy.deepcopy(QUORUM_POLICY)
    policy = parse_policy(raw)
    raw["tiers"]["high"]["step_up"] = "passkey"
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(raw))
    env = NO_URL | {"HITL_POLICY": str(path)}
    made = []
    for amount, via in ((5000, None), (6000, "passkey:cred-boss"), (7000, "passkey:cred-eve")):
        req = (
            await signed_store.create(
                policy, tool="refund", args={"amount": amount}, requester="U1"
            )
        ).request
        approve = Decision(
            event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash, via=via
        )
        await signed_store.transition(req.id, approve)
        made.append(req.id)
    await PasskeyStore(redis).add(
        Credential(id="cred-boss", user="UBOSS", public_key="pk", created_at=1)
    )
    await PasskeyStore(redis).add(
        Credential(id="cred-eve", user="UEVE", public_key="pk", created_at=1)
    )
    code, _, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 1
    assert f"request {made[0]}: entry 2: an approval on the high tier" in err
    assert made[1] not in err
    assert f"request {made[2]}: entry 2: the passkey cred-eve" in err
