"""The operator's CLI, run as a real process against the test Valkey."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest
import yaml
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import Policy, parse_policy
from bot.core.proof.chain import GENESIS, line_hash
from bot.core.states import Event
from bot.demo.policy import DEMO_POLICY
from bot.store import keys
from bot.store.requests import RequestStore


@pytest.fixture
def store(signed_store: RequestStore) -> RequestStore:
    """The people's decisions here are recorded as serve records them: signed."""
    return signed_store


async def cli(
    *args: str,
    redis_url: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, str, str]:
    extra = env or {}
    env = dict(os.environ) | extra
    if redis_url:
        env["REDIS_URL"] = redis_url
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def _history(store: RequestStore, policy: Policy) -> list[str]:
    ids = []
    for amount in (10, 20, 30):
        req = (
            await store.create(policy, tool="refund", args={"amount": amount}, requester="U1")
        ).request
        await store.transition(
            req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        )
        ids.append(req.id)
    return ids


async def test_audit_verify_finds_a_rewritten_approval(
    store: RequestStore, policy: Policy, redis: Redis, redis_url: str
) -> None:
    ids = await _history(store, policy)
    code, out, _ = await cli("audit", "verify", redis_url=redis_url)
    assert code == 0 and "3 requests" in out
    # Someone rewrites who approved the second request (entry 2; entry 1 is its creation).
    key = keys.audit(ids[1])
    original = await redis.lindex(key, 1) or ""
    forged = original.replace('"actor":"U2"', '"actor":"U9"')
    assert forged != original
    await redis.lset(key, 1, forged)
    code, _, err = await cli("audit", "verify", redis_url=redis_url)
    assert code == 1
    assert f"request {ids[1]}: entry 2" in err
    assert ids[0] not in err and ids[2] not in err


async def _relink(redis: Redis, rid: str, entries: list[dict[str, object]]) -> None:
    """Rewrite a request's audit list with every link and the head recomputed."""
    prev, lines = GENESIS, []
    for e in entries:
        line = json.dumps({**e, "prev": prev}, separators=(",", ":"))
        lines.append(line)
        prev = line_hash(line)
    await redis.delete(keys.audit(rid))
    await redis.rpush(keys.audit(rid), *lines)
    await redis.hset(keys.request(rid), "audit_head", prev)


async def _drop_last(redis: Redis, rid: str) -> None:
    await redis.rpop(keys.audit(rid))


async def _truncate(redis: Redis, rid: str) -> None:
    await redis.ltrim(keys.audit(rid), 1, -1)  # the oldest entry (the creation) cut away


async def _delete_all(redis: Redis, rid: str) -> None:
    await redis.delete(keys.audit(rid))


async def _swap(redis: Redis, rid: str) -> None:
    first, second = await redis.lrange(keys.audit(rid), 0, 1)
    await redis.lset(keys.audit(rid), 0, second)
    await redis.lset(keys.audit(rid), 1, first)


async def _wrong_head(redis: Redis, rid: str) -> None:
    await redis.hset(keys.request(rid), "audit_head", "f" * 40)


async def _seq_gap(redis: Redis, rid: str) -> None:
    # A forger who re-chains the links and the head but keeps the numbers: 1, then 3.
    entries = [json.loads(x) for x in await redis.lrange(keys.audit(rid), 0, -1)]
    entries[1]["seq"] = 3
    await _relink(redis, rid, entries)


@pytest.mark.parametrize(
    ("tamper", "entry"),
    [
        (_drop_last, 1),
        (_truncate, 1),
        (_delete_all, 1),
        (_swap, 1),
        (_wrong_head, 2),
        (_seq_gap, 2),
    ],
    ids=["deleted-last", "truncated", "emptied", "reordered", "wrong-head", "seq-gap"],
)
async def test_audit_verify_fails_on_tampering(
    store: RequestStore,
    policy: Policy,
    redis: Redis,
    redis_url: str,
    tamper: Callable[[Redis, str], Awaitable[None]],
    entry: int,
) -> None:
    ids = await _history(store, policy)
    await tamper(redis, ids[1])
    code, _, err = await cli("audit", "verify", redis_url=redis_url)
    assert code == 1, err
    assert f"request {ids[1]}: entry {entry}:" in err
    assert ids[0] not in err and ids[2] not in err


async def test_audit_export_writes_json_lines(
    store: RequestStore, policy: Policy, redis_url: str, tmp_path: Path
) -> None:
    ids = await _history(store, policy)
    target = tmp_path / "audit.jsonl"
    code, _, err = await cli("audit", "export", "-o", str(target), redis_url=redis_url)
    assert code == 0, err
    rows = [json.loads(x) for x in target.read_text().splitlines()]
    assert [r["request_id"] for r in rows] == [i for i in ids for _ in range(2)]
    assert {r["event"] for r in rows} == {"create", "approve"}


async def test_policy_check_reports_every_problem_in_one_run(tmp_path: Path) -> None:
    """Field errors and the cross-field ones (pydantic skips the model's check when a
    field is wrong) together: fixing the first batch must not reveal a second."""
    bad = tmp_path / "policy.yaml"
    bad.write_text(
        "tiers:\n"
        "  low: {review_timeout: soon, reviewers: {channels: [x]}}\n"  # field: bad duration
        "  medium: {review_timeout: 5m, reviewers: {channels: [x]}, on_exhausted: auto_approved}\n"
        "  high: {review_timeout: 5m, reviewers: {channels: [x]}, on_exhausted: auto_approved}\n"
        "  critical: {review_timeout: 5m, reviewers: {oncall: nobody}, colour: red}\n"
        "tools: {refund: {tier: huge}}\n"
    )
    code, _, err = await cli("policy", "check", str(bad))
    assert code == 2
    for problem in (
        "tiers.low.review_timeout",
        "tiers.critical.colour",
        "tools.refund.tier: 'huge' is not a risk tier",  # the bad value and its place
        "tiers.medium.on_exhausted: auto_approved is allowed for low risk only",
        "tiers.high.on_exhausted: auto_approved is allowed for low risk only",
        "tiers.high.approvers: a high tier must name who may approve",
        "tiers.critical.approvers: a critical tier must name who may approve",
        "oncall rotation 'nobody' is not defined",
    ):
        assert problem in err, (problem, err)


async def test_policy_show_prints_the_policy_in_effect(tmp_path: Path) -> None:
    code, text, err = await cli("policy", "show", env={"HITL_POLICY": ""})  # unset
    assert code == 0, err
    assert "built-in default" in text and "#hitl-leads" in text  # who may decide high
    high = next(line for line in text.splitlines() if " high " in line)
    for cell in ("15m", "#hitl-approvals", "#hitl-oncall (15m) -> #hitl-leads (15m)"):
        assert cell in high, (cell, high)  # review timeout, reviewers, escalation
    assert "auto_rejected" in high and "#hitl-leads + each level reached" in high
    assert high.rstrip().rstrip("│").rstrip().endswith("-")  # no standing approvals
    assert "waits 10m for its executor" in text and "may run 15m" in text
    mine = tmp_path / "p.yaml"
    mine.write_text(yaml.safe_dump(DEMO_POLICY))
    for how in ((str(mine),), ()):  # the file named, else HITL_POLICY's
        code, shown, _ = await cli("policy", "show", *how, env={"HITL_POLICY": str(mine)})
        assert code == 0 and str(mine) in shown.replace("\n", "")
        assert "issue_refund" in shown and "if amount > 1000: high" in shown
        assert "SFINANCE" in shown and "built-in" not in shown  # the high tier's approvers


async def test_pending_and_show(store: RequestStore, policy: Policy, redis_url: str) -> None:
    req = (
        await store.create(
            policy, tool="refund", args={"amount": 4200, "to": "<!channel>"}, requester="U1"
        )
    ).request
    code, out, _ = await cli("pending", "--json", redis_url=redis_url)
    assert code == 0
    listed = json.loads(out)
    assert [r["id"] for r in listed] == [req.id] and listed[0]["risk"] == "high"
    code, out, _ = await cli("show", req.id, redis_url=redis_url)
    assert code == 0 and "intact" in out and "<!channel>" in out and "outcome" not in out
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
    )
    await store.transition(req.id, Decision(event=Event.CLAIM, actor="api"))
    await store.transition(req.id, Decision(event=Event.SUCCEED, actor="api", detail="re_881"))
    code, out, _ = await cli("show", req.id, redis_url=redis_url)
    assert code == 0 and "outcome: re_881" in out
    code, _, err = await cli("show", "missing", redis_url=redis_url)
    assert code == 2 and "No request with id missing" in err


async def test_policy_check_names_file_field_and_fix(tmp_path: Path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text(
        "tiers:\n"
        + "".join(
            f"  {t}:\n    review_timeout: 5m\n    reviewers: {{channels: [x]}}\n"
            + ("    approvers: [S_LEADS]\n" if t == "critical" else "")
            for t in ("low", "medium", "critical")
        )
        + "  high:\n    review_timeout: 5m\n    reviewers: {channels: [x]}\n"
        "    on_exhausted: auto_approved\n    approvers: [S_LEADS]\n"
    )
    code, _, err = await cli("policy", "check", str(bad))
    assert code == 2
    assert str(bad) in err and "on_exhausted" in err and "fix" in err
    good = tmp_path / "ok.yaml"
    good.write_text(bad.read_text().replace("auto_approved", "auto_rejected"))
    code, out, _ = await cli("policy", "check", str(good))
    assert code == 0 and "critical" in out
    code, _, err = await cli("policy", "check", str(tmp_path / "missing.yaml"))
    assert code == 2 and "HITL_POLICY" in err


async def test_serve_refuses_to_start_without_the_signing_secret(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_", "REDIS_URL"))
    }
    env.update({"SLACK_BOT_TOKEN": "xoxb-x", "HITL_DATA_DIR": str(tmp_path)})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    text = err.decode()
    assert "SLACK_SIGNING_SECRET is not set" in text and "fix" in text
    assert not (tmp_path / "valkey.sock").exists()  # refused before starting anything


async def test_audit_verify_names_a_forged_approval(
    store: RequestStore, policy: Policy, redis: Redis, redis_url: str
) -> None:
    ids = await _history(store, policy)
    forger = RequestStore(redis)  # the store's own API, without serve's key
    req = (await forger.create(policy, tool="refund", args={"amount": 9}, requester="U1")).request
    await forger.transition(
        req.id, Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
    )
    code, _, err = await cli("audit", "verify", redis_url=redis_url)
    assert code == 1, err
    assert f"request {req.id}: entry 2: approve by U2: unsigned" in err
    assert not any(rid in err for rid in ids)
    # `show` still names the person, and says the name is not backed by serve's key
    code, out, _ = await cli("show", req.id, redis_url=redis_url)
    assert code == 0 and "signatures FORGED at entry 2 (approve by U2: unsigned)" in out
    code, out, _ = await cli("show", ids[0], redis_url=redis_url)
    assert "signatures valid" in out


async def test_audit_heads_detect_a_relinked_rewrite_and_a_deletion(
    store: RequestStore, policy: Policy, redis: Redis, redis_url: str, tmp_path: Path
) -> None:
    ids = await _history(store, policy)
    kept = tmp_path / "heads.json"
    code, _, err = await cli("audit", "heads", "-o", str(kept), redis_url=redis_url)
    assert code == 0, err
    code, out, err = await cli("audit", "verify", "--heads", str(kept), redis_url=redis_url)
    assert code == 0 and "Every kept head matches." in out, err
    # Rewritten with every link and the head recomputed: the chain alone verifies.
    entries = [json.loads(x) for x in await redis.lrange(keys.audit(ids[0]), 0, -1)]
    entries[-1]["text"] = "approved on the phone"
    await _relink(redis, ids[0], entries)
    await redis.delete(keys.request(ids[2]), keys.audit(ids[2]))
    code, _, err = await cli("audit", "verify", "--heads", str(kept), redis_url=redis_url)
    assert code == 1
    assert f"request {ids[0]}: history rewritten" in err
    assert f"request {ids[2]}: deleted" in err
    assert ids[1] not in err
    # A heads file edited to match is not signed by the key any more.
    doc = json.loads(kept.read_text())
    doc["heads"] = [h for h in doc["heads"] if h["id"] != ids[2]]
    kept.write_text(json.dumps(doc))
    code, _, err = await cli("audit", "verify", "--heads", str(kept), redis_url=redis_url)
    assert code == 1 and "signature is not this bot's key's" in err


async def test_keys_show_prints_the_key_get_v1_keys_gives(redis_url: str) -> None:
    from tests.api.live import TOKEN, live_server
    from tests.conftest import QUORUM_POLICY

    code, out, err = await cli("keys", "show")
    assert code == 0, err
    with live_server(redis_url, parse_policy(QUORUM_POLICY)) as server:
        async with httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as c:
            listing = (await c.get("/v1/keys")).json()["keys"]
    assert out.split() == [listing[0]["id"], "ed25519", listing[0]["public_key"]]


async def test_policy_show_names_each_tiers_standing_approvals(tmp_path: Path) -> None:
    data = copy.deepcopy(DEMO_POLICY)
    data["tiers"]["low"]["standing"] = {"max": "30m", "scope": "requester"}
    mine = tmp_path / "p.yaml"
    mine.write_text(yaml.safe_dump(data))
    code, text, err = await cli("policy", "show", str(mine))
    assert code == 0, err
    low = next(line for line in text.splitlines() if " low " in line)
    assert "30m, requester" in low, low
