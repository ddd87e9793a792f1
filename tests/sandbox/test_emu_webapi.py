"""The Web API through slack_sdk's AsyncWebClient: success shapes and Slack's error codes."""

from __future__ import annotations

import json

import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox.slack import SlackEmulator
from tests.sandbox.conftest import TOKEN, actions, button


async def error_of(call: object) -> str:
    with pytest.raises(SlackApiError) as caught:
        await call  # type: ignore[misc]
    return str(caught.value.response["error"])


async def test_auth_test_names_the_bot(client: AsyncWebClient, emulator: SlackEmulator) -> None:
    r = await client.auth_test()
    assert (r["user_id"], r["bot_id"], r["team_id"]) == ("UBOT", "BBOT", "TEMULATOR")
    assert r["url"] == emulator.base_url + "/"


async def test_post_message_by_name_or_id_with_blocks(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    r = await client.chat_postMessage(
        channel="#hitl-approvals", text="fallback", blocks=actions(button("approve"))
    )
    assert r["channel"] == "CHITLAPPROVALS"
    message = r["message"]
    assert message["bot_id"] == "BBOT" and message["user"] == "UBOT"
    assert message["blocks"][0]["elements"][0]["action_id"] == "approve"
    again = await client.chat_postMessage(channel="CHITLAPPROVALS", text="second")
    assert float(again["ts"]) > float(r["ts"])
    assert [m.text for m in emulator.messages("#hitl-approvals")] == ["fallback", "second"]


async def test_blocks_as_json_string_in_a_form_body(emulator: SlackEmulator) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}}]
    async with httpx.AsyncClient() as http:
        r = await http.post(
            emulator.api_url + "chat.postMessage",
            data={"token": TOKEN, "channel": "general", "blocks": json.dumps(blocks)},
        )
    body = r.json()
    assert body["ok"] is True
    assert body["message"]["blocks"][0]["text"]["text"] == "*hi*"
    assert body["message"]["blocks"][0]["block_id"]  # Slack fills in missing block ids


async def test_unknown_channel_and_bad_tokens(emulator: SlackEmulator) -> None:
    good = AsyncWebClient(token=TOKEN, base_url=emulator.api_url)
    assert await error_of(good.chat_postMessage(channel="#nope", text="x")) == "channel_not_found"
    bad = AsyncWebClient(token="xoxb-wrong", base_url=emulator.api_url)
    assert await error_of(bad.auth_test()) == "invalid_auth"
    none = AsyncWebClient(base_url=emulator.api_url)
    assert await error_of(none.auth_test()) == "not_authed"
    assert await error_of(good.api_call("chat.scheduleMessage")) == "unknown_method"


async def test_block_limits_are_enforced(client: AsyncWebClient) -> None:
    many = [{"type": "divider"} for _ in range(51)]
    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel="general", text="x", blocks=many)
    assert caught.value.response["error"] == "invalid_blocks"
    assert "less than 51 items" in caught.value.response["errors"][0]
    long = [{"type": "section", "text": {"type": "mrkdwn", "text": "a" * 3001}}]
    assert await error_of(client.chat_postMessage(channel="general", text="x", blocks=long)) == (
        "invalid_blocks"
    )


async def test_thread_replies_and_conversations_replies(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    parent = await client.chat_postMessage(channel="general", text="parent")
    reply = await client.chat_postMessage(channel="general", text="reply", thread_ts=parent["ts"])
    assert reply["message"]["thread_ts"] == parent["ts"]
    await emulator.post("bob", "general", "human reply", thread_ts=parent["ts"])
    r = await client.conversations_replies(channel=parent["channel"], ts=parent["ts"])
    texts = [m["text"] for m in r["messages"]]
    assert texts == ["parent", "reply", "human reply"]
    assert r["messages"][0]["reply_count"] == 2
    bogus = client.conversations_replies(channel="CGENERAL", ts="1.000001")
    assert await error_of(bogus) == "thread_not_found"


async def test_update_only_the_bots_own_existing_messages(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    posted = await client.chat_postMessage(channel="general", text="v1")
    updated = await client.chat_update(channel=posted["channel"], ts=posted["ts"], text="v2")
    assert updated["ts"] == posted["ts"] and updated["text"] == "v2"
    assert updated["message"]["edited"]["user"] == "UBOT"
    missing = client.chat_update(channel="CGENERAL", ts="1.000001", text="x")
    assert await error_of(missing) == "message_not_found"
    human = await emulator.post("alice", "general", "mine")
    theirs = client.chat_update(channel="CGENERAL", ts=human.ts, text="hijack")
    assert await error_of(theirs) == "cant_update_message"


async def test_ephemeral_permalink_and_conversation_lookups(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    eph = await client.chat_postEphemeral(channel="general", user="UALICE", text="psst")
    assert [e.text for e in emulator.ephemerals("alice")] == ["psst"]
    assert emulator.ephemerals("bob") == []
    posted = await client.chat_postMessage(channel="general", text="x")
    link = await client.chat_getPermalink(channel="CGENERAL", message_ts=posted["ts"])
    assert link["permalink"].endswith("/archives/CGENERAL/p" + posted["ts"].replace(".", ""))
    assert eph["message_ts"]
    dm = await client.conversations_open(users="UKID")
    assert dm["channel"]["id"].startswith("D")
    assert (await client.conversations_open(users=["UKID"]))["channel"]["id"] == dm["channel"]["id"]
    # A DM's info needs im:read, which the bot's manifest does not ask for (it never looks)
    emulator.scopes.grant(TOKEN, [*emulator.scopes.default, "im:read"])
    info = await client.conversations_info(channel=dm["channel"]["id"])
    assert info["channel"]["is_im"] is True and info["channel"]["user"] == "UKID"
    assert (await client.users_info(user="UPARENT"))["user"]["name"] == "parent"
    assert await error_of(client.users_info(user="UNOBODY")) == "user_not_found"


async def test_usergroups_and_reactions(client: AsyncWebClient, emulator: SlackEmulator) -> None:
    r = await client.usergroups_users_list(usergroup="SAPPROVERS")
    assert r["users"] == ["UALICE", "UBOB"]
    assert await error_of(client.usergroups_users_list(usergroup="SX")) == "no_such_subteam"
    posted = await client.chat_postMessage(channel="general", text="x")
    await client.reactions_add(channel="CGENERAL", timestamp=posted["ts"], name="white_check_mark")
    again = client.reactions_add(
        channel="CGENERAL", timestamp=posted["ts"], name="white_check_mark"
    )
    assert await error_of(again) == "already_reacted"
    assert emulator.messages("general")[0].reactions == {"white_check_mark": ["UBOT"]}


async def test_views_open_needs_a_fresh_trigger(client: AsyncWebClient) -> None:
    view = {
        "type": "modal",
        "title": {"type": "plain_text", "text": "Reject"},
        "blocks": [],
    }
    stale = client.views_open(trigger_id="12345.98765.abcd2358fdea", view=view)
    assert await error_of(stale) == "expired_trigger_id"
    assert await error_of(client.views_open(trigger_id="nonsense", view=view)) == (
        "invalid_trigger_id"
    )


async def test_views_publish_and_update_check_the_hash(client: AsyncWebClient) -> None:
    home = {
        "type": "home",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "a"}}],
    }
    first = await client.views_publish(user_id="UALICE", view=home)
    view_id, hash_ = first["view"]["id"], first["view"]["hash"]
    second = await client.views_publish(user_id="UALICE", view=home, hash=hash_)
    assert second["view"]["id"] == view_id and second["view"]["hash"] != hash_
    conflict = client.views_update(view_id=view_id, view=home, hash=hash_)
    assert await error_of(conflict) == "hash_conflict"
    assert await error_of(client.views_update(view_id="VNOPE", view=home)) == "not_found"


async def test_archived_and_private_channels_are_shown_as_slack_shows_them(
    client: AsyncWebClient, emulator: SlackEmulator
) -> None:
    from bot.sandbox.slack.workspace import Channel

    emulator.workspace.channels["COLD"] = Channel("COLD", "old", is_archived=True)
    emulator.workspace.channels["CPRIV"] = Channel("CPRIV", "priv", "group", ["UBOT"])
    info = (await client.conversations_info(channel="COLD"))["channel"]
    assert (info["is_archived"], info["is_private"]) == (True, False)
    assert (await client.conversations_info(channel="CPRIV"))["channel"]["is_private"] is True
    every = await client.conversations_list(types="public_channel,private_channel")
    live = await client.conversations_list(
        types="public_channel,private_channel", exclude_archived=True
    )
    assert {"old", "priv"} <= {c["name"] for c in every["channels"]}
    assert "old" not in {c["name"] for c in live["channels"]}
