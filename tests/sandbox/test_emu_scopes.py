"""The emulator reports and enforces a token's scopes as Slack does: `x-oauth-scopes` on
every Web API answer, `missing_scope` with `needed` and `provided` for a method whose
scope the token lacks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox.slack import SlackEmulator
from bot.slack.checks.scopes import WANTED
from tests.sandbox.conftest import TOKEN


def test_the_bot_wants_exactly_the_scopes_manifest_yml_asks_for() -> None:
    with (Path(__file__).resolve().parents[2] / "manifest.yml").open() as f:
        manifest = yaml.safe_load(f)
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(WANTED)


async def test_every_answer_names_the_tokens_scopes(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    resp = await client.auth_test()
    assert set(resp.headers["x-oauth-scopes"].split(",")) == set(WANTED)
    emulator.scopes.grant(TOKEN, ["chat:write", "channels:read"])
    resp = await client.conversations_info(channel="CHITLAPPROVALS")
    assert resp.headers["x-oauth-scopes"] == "channels:read,chat:write"


async def test_a_method_without_its_scope_answers_missing_scope(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    emulator.scopes.grant(TOKEN, ["chat:write", "channels:read"])
    with pytest.raises(SlackApiError) as refused:
        await client.usergroups_users_list(usergroup="SAPPROVERS")
    body = refused.value.response.data
    assert isinstance(body, dict)
    assert body["error"] == "missing_scope"
    assert body["needed"] == "usergroups:read"
    assert body["provided"] == "channels:read,chat:write"
    # a private channel needs groups:read, a public one channels:read
    await client.conversations_info(channel="CHITLAPPROVALS")
    with pytest.raises(SlackApiError, match="missing_scope"):
        await client.conversations_list(types="public_channel,private_channel")
    await client.chat_postMessage(channel="CHITLAPPROVALS", text="still allowed")
    await emulator.reset()  # back to the manifest's scopes
    assert (await client.usergroups_users_list(usergroup="SAPPROVERS"))["ok"]
