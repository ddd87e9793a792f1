"""`hitl-bot doctor` as a real process against the Slack emulator and the test Valkey:
a clean deployment is all PASS; each deliberate fault shows on its own line, FAIL or
WARN, with the fix, and any FAIL makes the exit code 1."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from redis.asyncio import Redis

from bot.sandbox.slack import SlackEmulator
from bot.sandbox.slack.defaults import default_channels
from bot.sandbox.slack.workspace import Channel
from bot.slack.checks.scopes import WANTED
from bot.store.run.agents import AgentDirectory
from tests.e2e.conftest import APP_TOKEN, POLICY, SECRET, TOKEN
from tests.support.keys import SERVE_SEED

# A private channel the bot was never invited to.
PRIVATE_OPS = Channel("CPRIVATEOPS", "private-ops", "group", ["UALICE"])
Rows = list[dict[str, str]]


@pytest.fixture
async def emu() -> AsyncIterator[SlackEmulator]:
    channels = [*default_channels(), PRIVATE_OPS]
    async with SlackEmulator(SECRET, TOKEN, channels=channels, app_token=APP_TOKEN) as emulator:
        yield emulator


async def doctor(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, policy: Any, *args: str, **env: str
) -> tuple[int, Rows]:
    path = tmp_path / "policy.yaml"
    path.write_text(policy if isinstance(policy, str) else yaml.safe_dump(policy))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_", "REDIS"))}
    base |= {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_API_URL": emu.api_url,
        "SLACK_SIGNING_SECRET": SECRET,
        "REDIS_URL": redis_url,
        "HITL_POLICY": str(path),
        "HITL_DATA_DIR": str(tmp_path / "data"),
        "HITL_SIGNING_KEY": SERVE_SEED,
    }
    env_final = {k: v for k, v in (base | env).items() if v}  # "" unsets
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "doctor", "--json", *args,
        env=env_final, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    rows = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert rows, err.decode()
    return proc.returncode, rows


def line(rows: Rows, check: str, status: str, *words: str) -> dict[str, str]:
    """The one line of `check` with `status` whose text and fix say every one of `words`."""
    for row in rows:
        said = " ".join(f"{row['text']} {row['fix']}".split())
        if row["check"] == check and row["status"] == status and all(w in said for w in words):
            return row
    raise AssertionError(f"no {status} {check} line saying {words}: {json.dumps(rows, indent=1)}")


@contextlib.asynccontextmanager
async def appendonly(redis: Redis, value: str) -> AsyncIterator[None]:
    """The test Valkey with `appendonly` set to `value` for a while, then as it was."""
    was = (await redis.config_get("appendonly"))["appendonly"]
    await redis.config_set("appendonly", value)
    try:
        yield
    finally:
        await redis.config_set("appendonly", was)


async def test_a_clean_deployment_is_all_pass(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Redis
) -> None:
    await AgentDirectory(redis).announce(["claw"])
    async with appendonly(redis, "yes"):
        code, rows = await doctor(
            emu, tmp_path, redis_url, POLICY, SLACK_APP_TOKEN=APP_TOKEN, HITL_DEFAULT_AGENT="claw"
        )
    assert [r for r in rows if r["status"] != "PASS"] == [] and code == 0
    checks = {r["check"] for r in rows}
    assert checks >= {"policy", "slack token", "scopes", "channel", "user group", "events"}
    assert checks >= {"signing key", "store", "persistence", "replicas", "workers"}
    line(rows, "user group", "PASS", "SAPPROVERS", "2 member(s)", "tiers.high.approvers")
    line(rows, "channel", "PASS", "#hitl-approvals (CHITLAPPROVALS", "the bot is a member")
    line(rows, "default agent", "PASS", "claw")


async def test_each_fault_is_named_on_its_own_line_with_the_fix(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Redis
) -> None:
    policy = copy.deepcopy(POLICY)
    policy["tiers"]["medium"]["reviewers"]["channels"] = ["CPRIVATEOPS"]
    policy["tiers"]["critical"]["approvers"] = ["SNOPE"]
    emu.scopes.grant(TOKEN, set(WANTED) - {"chat:write", "reactions:write"})
    key = tmp_path / "data" / "signing.key"
    key.parent.mkdir()
    key.write_text(SERVE_SEED + "\n")
    key.chmod(0o644)
    async with appendonly(redis, "no"):
        code, rows = await doctor(
            emu, tmp_path, redis_url, policy, "--events-url", emu.base_url + "/slack/events",
            HITL_SIGNING_KEY="", HITL_REPLICA_ACKS="1", HITL_DEFAULT_AGENT="ghost",
        )  # fmt: skip
    assert code == 1
    line(rows, "scopes", "FAIL", "chat:write", "nobody is asked", "OAuth & Permissions")
    line(rows, "scopes", "WARN", "reactions:write", "reinstall the app")
    line(rows, "channel", "FAIL", "CPRIVATEOPS", "private and the bot is not a member",
         "/invite @hitl-bot")  # fmt: skip
    line(rows, "user group", "FAIL", "tiers.critical.approvers", "SNOPE", "no_such_subteam")
    line(rows, "events", "FAIL", "/slack/events", "url_verification", "SLACK_SIGNING_SECRET")
    line(rows, "persistence", "FAIL", "appendonly", "CONFIG SET appendonly yes")
    line(rows, "replicas", "FAIL", "HITL_REPLICA_ACKS=1", "0 replica(s)", "connect 1 replica")
    line(rows, "signing key", "FAIL", str(key), "mode 644", f"chmod 600 {key}")
    line(rows, "workers", "WARN", "No worker offers an agent", "hitl-bot worker")
    line(rows, "default agent", "FAIL", "HITL_DEFAULT_AGENT=ghost", "--agent ghost")
    # the lines the faults do not touch still pass
    line(rows, "slack token", "PASS", "UBOT")
    line(rows, "channel", "PASS", "#hitl-oncall")
    line(rows, "user group", "PASS", "SAPPROVERS")


async def test_a_token_without_usergroups_read_fails_where_the_policy_names_a_group(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Redis
) -> None:
    emu.scopes.grant(TOKEN, set(WANTED) - {"usergroups:read"})
    code, rows = await doctor(emu, tmp_path, redis_url, POLICY, SLACK_APP_TOKEN=APP_TOKEN)
    assert code == 1
    line(rows, "scopes", "FAIL", "usergroups:read", "tiers.high.approvers: SAPPROVERS",
         "nobody in the group can approve")  # fmt: skip
    line(rows, "user group", "FAIL", "usergroups:read")


async def test_a_refused_token_a_bad_policy_and_no_store_fail_their_lines(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Redis
) -> None:
    code, rows = await doctor(
        emu, tmp_path, redis_url, "tiers: {high: {review_timeout: soon}}\n",
        SLACK_BOT_TOKEN="xoxb-revoked", SLACK_SIGNING_SECRET="", REDIS_URL="redis://127.0.0.1:1/0",
    )  # fmt: skip
    assert code == 1
    line(rows, "policy", "FAIL", "policy.yaml", "does not load", "hitl-bot policy check")
    line(rows, "slack token", "FAIL", "invalid_auth", "SLACK_BOT_TOKEN")
    line(rows, "events", "FAIL", "SLACK_SIGNING_SECRET is not set", "Socket Mode")
    line(rows, "store", "FAIL", "Cannot reach Redis at redis://127.0.0.1:1/0", "fix:")
    line(rows, "workers", "WARN", "the store line failed")


async def test_a_public_channel_the_bot_left_is_named_with_the_invite(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Redis
) -> None:
    emu.remove_bot("#hitl-oncall")
    code, rows = await doctor(emu, tmp_path, redis_url, POLICY, SLACK_APP_TOKEN=APP_TOKEN)
    assert code == 1
    line(rows, "channel", "FAIL", "#hitl-oncall (CHITLONCALL, public): the bot is not a member",
         "escalations are not posted", "/invite @hitl-bot")  # fmt: skip
