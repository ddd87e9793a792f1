"""Channel principals resolved in Slack when the policy loads, through the
emulator: at `serve`'s start and in `hitl-bot policy check`.

- An unknown or archived channel is refused, naming it.
- A public channel as approvers of a high or critical tier is warned of, loudly.
- A name means the channel it meant at start: one created later under it decides nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.clock import FakeClock
from bot.config import Settings
from bot.core.policy import parse_policy
from bot.core.states import State
from bot.errors import ConfigError
from bot.sandbox.slack import SlackEmulator
from bot.sandbox.slack.defaults import default_channels, default_users
from bot.sandbox.slack.workspace import Channel
from bot.server.serve import ServeOptions, run_serve
from bot.slack.blocks import render
from bot.store.requests import RequestStore
from tests.e2e.conftest import POLICY, SECRET, TOKEN
from tests.support.poll import eventually

PRIVATE = Channel("CSECRETLEADS", "secret-leads", "group", ["UALICE", "UBOT"])
ARCHIVED = Channel("COLDLEADS", "old-leads", is_archived=True)


def _policy(high: list[str], critical: list[str] | None = None) -> dict[str, Any]:
    policy = copy.deepcopy(POLICY)
    policy["tiers"]["high"]["approvers"] = high
    if critical is not None:
        policy["tiers"]["critical"]["approvers"] = critical
    return policy


@pytest.fixture
async def emu() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator(
        signing_secret=SECRET,
        bot_token=TOKEN,
        users=default_users(),
        channels=[*default_channels(), PRIVATE, ARCHIVED],
    ) as emulator:
        yield emulator


@contextlib.asynccontextmanager
async def serving(
    emu: SlackEmulator, policy: dict[str, Any], tmp_path: Path, redis_url: str
) -> AsyncIterator[str]:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(yaml.safe_dump(policy))
    settings = Settings(
        slack_bot_token=TOKEN,
        slack_signing_secret=SECRET,
        slack_api_url=emu.api_url,
        redis_url=redis_url,
        hitl_policy=policy_file,
        hitl_port=0,
        hitl_api_token="api-token-of-16-chars",
    )
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        run_serve(
            settings,
            stop,
            clock=FakeClock(int(time.time() * 1000)),
            on_ready=ready.set_result,
            options=ServeOptions(notifier_retry_ms=500, sweep_interval_s=0.05),
        )
    )
    done, _ = await asyncio.wait({ready, task}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()  # start was refused: raise why
    url = ready.result()
    emu.events_url = url + "/slack/events"
    try:
        yield url
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)


async def test_serve_refuses_an_unknown_channel_naming_it(
    emu: SlackEmulator, tmp_path: Path, redis_url: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        async with serving(emu, _policy(["#nope-leads"]), tmp_path, redis_url):
            pass
    assert "tiers.high.approvers" in str(refused.value) and "#nope-leads" in str(refused.value)


async def test_serve_refuses_an_archived_channel_naming_it(
    emu: SlackEmulator, tmp_path: Path, redis_url: str
) -> None:
    with pytest.raises(ConfigError, match=r"#old-leads \(COLDLEADS\) is archived"):
        async with serving(emu, _policy(["#old-leads"]), tmp_path, redis_url):
            pass


async def test_serve_warns_loudly_of_a_public_channel_approving_high_risk(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    policy = _policy(["#hitl-leads"], critical=["#secret-leads"])
    with caplog.at_level(logging.WARNING, logger="bot.slack.checks.principals"):
        async with serving(emu, policy, tmp_path, redis_url):
            pass
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    public = [w for w in warned if "#hitl-leads is a public channel" in w]
    assert public and "tiers.high.approvers" in public[0] and "user group" in public[0]
    assert not any("#secret-leads" in w for w in warned)  # private: no warning


async def test_a_channel_made_later_under_the_same_name_decides_nothing(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Any
) -> None:
    # At start #hitl-leads is CHITLLEADS, whose members are alice and the bot.
    leads = emu.workspace.channels["CHITLLEADS"]
    leads.members = ["UALICE", "UBOT"]
    policy = _policy(["#hitl-leads"])
    async with serving(emu, policy, tmp_path, redis_url):
        # Then it is renamed, and carol makes a new channel under the old name.
        leads.name = "hitl-leads-2025"
        emu.workspace.channels["CNEWLEADS"] = Channel("CNEWLEADS", "hitl-leads", members=["UCAROL"])
        store = RequestStore(redis, clock=FakeClock(int(time.time() * 1000)))
        made = await store.create(
            parse_policy(policy), tool="refund", args={"amount": 5000}, requester="agent"
        )
        rid = made.request.id
        ch, ts = await eventually(lambda: _card(redis, rid))
        await emu.click("UCAROL", render.ACTION_APPROVE, channel=ch, ts=ts)

        async def refused() -> bool:
            return any("not among its approvers" in e.text for e in emu.ephemerals("UCAROL"))

        await eventually(refused)
        assert (await store.get(rid)).state == State.PENDING_REVIEW
        await emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

        async def approved() -> bool:
            return (await store.get(rid)).state == State.APPROVED

        await eventually(approved)


async def _card(redis: Any, rid: str) -> tuple[str, str] | None:
    from bot.store.keys import request

    ch, ts = await redis.hmget(request(rid), ["msg_channel", "msg_ts"])
    return (ch, ts) if ch and ts else None


async def _policy_check(emu: SlackEmulator, policy: dict[str, Any], tmp_path: Path) -> Any:
    path = tmp_path / "check.yaml"
    path.write_text(yaml.safe_dump(policy))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "HITL_"))}
    env |= {"SLACK_BOT_TOKEN": TOKEN, "SLACK_API_URL": emu.api_url, "HITL_DATA_DIR": str(tmp_path)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "policy",
        "check",
        str(path),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_policy_check_resolves_channels_in_slack(emu: SlackEmulator, tmp_path: Path) -> None:
    code, out, err = await _policy_check(emu, _policy(["#hitl-leads"]), tmp_path)
    assert code == 0, err
    assert "WARNING tiers.high.approvers: #hitl-leads is a public channel" in " ".join(err.split())
    assert "#hitl-leads=CHITLLEADS" in err and "critical" in out
    code, _, err = await _policy_check(emu, _policy(["#secret-leads"]), tmp_path)
    assert code == 0 and "public channel" not in err
    code, _, err = await _policy_check(
        emu, _policy(["S1", "#nope"], critical=["#old-leads"]), tmp_path
    )
    flat = " ".join(err.split())
    assert code == 2
    assert "tiers.high.approvers: the channel #nope does not exist" in flat
    assert "tiers.critical.approvers: the channel #old-leads (COLDLEADS) is archived" in flat


async def test_a_channel_archived_after_start_has_no_members_that_count(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, redis: Any
) -> None:
    leads = emu.workspace.channels["CHITLLEADS"]
    leads.members = ["UALICE", "UBOT"]
    policy = _policy(["#hitl-leads"])
    async with serving(emu, policy, tmp_path, redis_url):
        leads.is_archived = True
        store = RequestStore(redis, clock=FakeClock(int(time.time() * 1000)))
        made = await store.create(
            parse_policy(policy), tool="refund", args={"amount": 5000}, requester="agent"
        )
        ch, ts = await eventually(lambda: _card(redis, made.request.id))
        await emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

        async def refused() -> bool:
            return any("not among its approvers" in e.text for e in emu.ephemerals("UALICE"))

        await eventually(refused)
        assert (await store.get(made.request.id)).state == State.PENDING_REVIEW


async def test_serve_names_each_review_and_escalation_channel_the_bot_is_not_in(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Slack refuses cards there (or, with chat:write.public, sends the bot no replies
    from there): said at start with the fix, once per channel."""
    emu.remove_bot("#hitl-approvals")  # every tier's review channel
    emu.remove_bot("#hitl-oncall")  # every tier's escalation channel
    emu.workspace.scopes.discard("chat:write.public")  # Slack's header says so: refused
    with caplog.at_level(logging.WARNING, logger="bot.slack.checks.principals"):
        async with serving(emu, _policy(["#secret-leads"]), tmp_path, redis_url):
            pass
    warned = [r.getMessage() for r in caplog.records if "is not a member of" in r.getMessage()]
    assert len(warned) == 2, warned
    for name in ("#hitl-approvals", "#hitl-oncall"):
        line = next(w for w in warned if f"the bot is not a member of {name}" in w)
        assert f"Fix: /invite @hitl-bot to {name}" in line
        assert "not_in_channel" in line and "never reach the bot" in line  # replies unheard
    assert "tiers.low.reviewers.channels" in " ".join(warned)
    assert "tiers.critical.escalation.0.channels" in " ".join(warned)
    assert not any("#secret-leads" in w or "#hitl-leads" in w for w in warned)


async def test_policy_check_names_the_channels_the_bot_is_not_in(
    emu: SlackEmulator, tmp_path: Path
) -> None:
    emu.remove_bot("#hitl-approvals")
    code, _, err = await _policy_check(emu, _policy(["#secret-leads"]), tmp_path)
    flat = " ".join(err.split())
    assert code == 0, err  # a warning: the bot may be invited after the check
    assert "the bot is not a member of #hitl-approvals" in flat
    assert "Fix: /invite @hitl-bot to #hitl-approvals" in flat
    assert "never reach the bot" in flat
    assert "not a member of #hitl-oncall" not in flat  # the bot is in that one
