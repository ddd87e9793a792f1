"""The bot's membership of a channel, as Slack enforces it: posting, `is_member`, and
which messages the Events API sends the bot."""

from __future__ import annotations

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox.slack import SlackEmulator
from tests.sandbox.conftest import FakeBot


async def _error(client: AsyncWebClient, channel: str) -> str | None:
    try:
        await client.chat_postMessage(channel=channel, text="card")
    except SlackApiError as exc:
        return str(exc.response["error"])
    return None


async def test_a_channel_the_bot_left_refuses_its_posts_unless_public_posting_is_granted(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    emulator.workspace.scopes.discard("chat:write.public")
    emulator.remove_bot("#hitl-approvals")
    info = (await client.conversations_info(channel="CHITLAPPROVALS"))["channel"]
    assert info["is_member"] is False and info["is_private"] is False
    assert await _error(client, "#hitl-approvals") == "not_in_channel"
    assert emulator.messages("#hitl-approvals") == []
    assert await _error(client, "#general") is None  # still a member there

    emulator.workspace.scopes.add("chat:write.public")  # public: posts without joining
    assert await _error(client, "#hitl-approvals") is None
    assert (await client.conversations_info(channel="CHITLAPPROVALS"))["channel"][
        "is_member"
    ] is False

    emulator.workspace.scopes.discard("chat:write.public")
    emulator.invite_bot("#hitl-approvals")
    assert await _error(client, "#hitl-approvals") is None
    listed = await client.conversations_list(types="public_channel")
    assert all(c["is_member"] for c in listed["channels"])  # every default channel: joined


async def test_the_bot_hears_nothing_from_a_channel_it_is_not_in(
    emulator: SlackEmulator, fake_bot: FakeBot
) -> None:
    emulator.remove_bot("#hitl-approvals")
    unheard = await emulator.post("alice", "#hitl-approvals", "approve <@UBOT>")
    assert unheard.event_ids == [] and fake_bot.events() == []
    assert emulator.messages("#hitl-approvals")[0].text == "approve <@UBOT>"  # people see it
    async with httpx.AsyncClient(base_url=emulator.base_url) as http:
        answer = await http.post(
            "/_emu/members", json={"channel": "#hitl-approvals", "action": "invite"}
        )
        assert answer.json() == {"channel": "CHITLAPPROVALS", "is_member": True}
        bad = await http.post("/_emu/members", json={"channel": "#nope", "action": "invite"})
        assert bad.status_code == 404
    heard = await emulator.post("alice", "#hitl-approvals", "approve")
    assert len(heard.event_ids) == 1 and fake_bot.events()[-1]["event"]["text"] == "approve"


async def test_reset_gives_back_the_scopes_and_members_it_was_made_with(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    emulator.workspace.scopes.clear()
    emulator.remove_bot("#hitl-approvals")
    await emulator.reset()
    assert "chat:write.public" in emulator.workspace.scopes
    assert await _error(client, "#hitl-approvals") is None
