"""The token's scopes and the policy's user groups, checked in Slack through the
emulator at `serve`'s start and by `hitl-bot policy check`:

- a user group Slack cannot resolve stops serve and fails the check, naming it and where;
- a token without a scope the policy needs (usergroups:read with a group approving)
  stops serve, naming the scope, where the policy needs it and what breaks;
- a missing scope nothing in the policy needs is a warning, and serve starts.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.errors import ConfigError
from bot.sandbox.slack import SlackEmulator
from bot.slack.checks.scopes import WANTED
from tests.e2e.conftest import POLICY, TOKEN
from tests.e2e.test_slack_channels import _policy, _policy_check, emu, serving

__all__ = ["emu"]  # the emulator fixture, shared with the channel checks


async def test_serve_refuses_an_unknown_user_group_naming_it(
    emu: SlackEmulator, tmp_path: Path, redis_url: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        async with serving(emu, _policy(["SAPPROVERS"], critical=["SNOPE"]), tmp_path, redis_url):
            pass
    said = " ".join(str(refused.value).split())
    assert "tiers.critical.approvers: the user group SNOPE could not be resolved" in said
    assert "no_such_subteam" in said and "SAPPROVERS" not in said


async def test_serve_refuses_a_token_without_the_scope_its_groups_need(
    emu: SlackEmulator, tmp_path: Path, redis_url: str
) -> None:
    emu.scopes.grant(TOKEN, set(WANTED) - {"usergroups:read"})
    with pytest.raises(ConfigError) as refused:
        async with serving(emu, POLICY, tmp_path, redis_url):
            pass
    said = " ".join(str(refused.value).split())
    assert "lacks the scope usergroups:read, which the policy needs" in said
    assert "(tiers.high.approvers: SAPPROVERS)" in said
    assert "nobody in the group can approve" in said and "reinstall the app" in said


async def test_serve_warns_of_a_missing_scope_nothing_needs_and_starts(
    emu: SlackEmulator, tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    emu.scopes.grant(TOKEN, set(WANTED) - {"reactions:write"})
    with caplog.at_level(logging.WARNING):
        async with serving(emu, POLICY, tmp_path, redis_url):
            pass
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("lacks the scope reactions:write" in w for w in warned), warned


async def test_policy_check_names_an_unknown_group_and_a_missing_scope(
    emu: SlackEmulator, tmp_path: Path
) -> None:
    code, _, err = await _policy_check(emu, _policy(["SAPPROVERS", "SNOPE"]), tmp_path)
    flat = " ".join(err.split())
    assert code == 2, err
    assert "tiers.high.approvers: the user group SNOPE could not be resolved" in flat
    code, _, err = await _policy_check(emu, _policy(["SAPPROVERS"]), tmp_path)
    assert code == 0, err
    assert "User groups resolved in Slack: SAPPROVERS (2 members)" in " ".join(err.split())
    emu.scopes.grant(TOKEN, set(WANTED) - {"usergroups:read"})
    code, _, err = await _policy_check(emu, _policy(["SAPPROVERS"]), tmp_path)
    assert code == 2 and "usergroups:read" in err
