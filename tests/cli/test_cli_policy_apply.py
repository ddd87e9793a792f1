"""`hitl-bot policy apply`: a reviewed fragment merged into the policy file only if the
result loads, and audited (who, which fragment by its hash, the file before and after);
`hitl-bot policy applied` lists what was applied."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml
from redis.asyncio import Redis

from bot.core.policy import load_policy
from bot.store.policy_log import applied
from tests.cli.test_cli import cli

POLICY = {
    "tiers": {
        t: {"review_timeout": "10m", "reviewers": {"channels": ["#approvals"]}, "approvers": ["*"]}
        for t in ("low", "medium", "high", "critical")
    },
    "tools": {"refund": {"tier": "medium"}, "delete": {"tier": "high"}},
}
# What `policy suggest --out` writes for calls people always approve: less review,
# inside the bounds the history showed.
FRAGMENT = {
    "tools": {"refund": {"tier": "low", "rules": [{"if": "amount > 50", "tier": "medium"}]}}
}


def _files(tmp_path: Path, fragment: object) -> tuple[Path, Path]:
    policy, frag = tmp_path / "policy.yaml", tmp_path / "suggested.yaml"
    policy.write_text(yaml.safe_dump(POLICY))
    frag.write_text("# reviewed by ops\n" + yaml.safe_dump(fragment))
    return policy, frag


async def test_a_fragment_is_merged_checked_and_audited(
    tmp_path: Path, redis: Redis, redis_url: str
) -> None:
    policy, frag = _files(tmp_path, FRAGMENT)
    before = policy.read_bytes()
    code, out, err = await cli(
        "policy", "apply", str(frag), "--by", "ops-alice", "--policy", str(policy),
        redis_url=redis_url,
    )  # fmt: skip
    assert code == 0, err
    assert "Applied" in out and "refund" in out
    merged = load_policy(policy)
    assert merged.tools["refund"].tier == "low"  # the fragment's entry
    assert merged.tools["delete"].tier is not None  # the rest kept as it was
    [entry] = await applied(redis)
    assert entry.by == "ops-alice" and entry.tools == ("refund",)
    assert entry.fragment_sha256 == hashlib.sha256(frag.read_bytes()).hexdigest()
    assert entry.before_sha256 == hashlib.sha256(before).hexdigest()
    assert entry.after_sha256 == hashlib.sha256(policy.read_bytes()).hexdigest()
    code, out, _ = await cli("policy", "applied", redis_url=redis_url)
    assert code == 0 and "ops-alice" in out and entry.fragment_sha256[:12] in out


async def test_a_fragment_that_breaks_the_policy_changes_nothing(
    tmp_path: Path, redis: Redis, redis_url: str
) -> None:
    broken = {"tools": {"refund": {"tier": "enormous"}}}
    policy, frag = _files(tmp_path, broken)
    before = policy.read_bytes()
    code, _, err = await cli(
        "policy", "apply", str(frag), "--by", "ops-alice", "--policy", str(policy),
        redis_url=redis_url,
    )  # fmt: skip
    assert code == 2 and "Not applied" in err
    assert policy.read_bytes() == before
    assert await applied(redis) == []


async def test_apply_wants_a_name_and_a_tools_fragment(
    tmp_path: Path, redis: Redis, redis_url: str
) -> None:
    policy, frag = _files(tmp_path, {"tiers": {}})
    code, _, err = await cli("policy", "apply", str(frag), "--policy", str(policy))
    assert code == 2 and "--by" in err
    code, out, _ = await cli("policy", "apply", "--help")
    assert code == 0 and "required" in out
    # No file named at all: said as such, not as "no policy file ."
    code, _, err = await cli("policy", "apply", str(frag), "--by", "x", env={"HITL_POLICY": ""})
    assert code == 2 and "no policy file to change; fix: give --policy FILE" in err, err
    code, _, err = await cli("policy", "apply", str(frag), "--by", "x", "--policy", "nope.yaml")
    assert code == 2 and "nope.yaml is not a policy file" in err, err
    code, _, err = await cli(
        "policy", "apply", str(frag), "--by", "x", "--policy", str(policy), redis_url=redis_url
    )
    assert code == 2 and "not a policy fragment" in err
    assert await applied(redis) == []
