"""Posting once per item and slot: tagged posts, and adopting the copy an attempt that
died mid-post left behind instead of posting a second one (emulator + real Valkey)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.clock import wall_ms
from bot.sandbox.slack import SlackEmulator
from bot.slack.delivery.once import EVENT_TYPE, OncePoster, Tag
from bot.store.stores import StoreSet

TOKEN = "xoxb-once"
CARD = Tag("request", "r1", "card")
INTENT = ("hitl:{s00}:req:r1", "msg_posting")


@pytest.fixture
async def emu() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator(bot_token=TOKEN) as emu:
        yield emu


def poster(redis: Redis, emu: SlackEmulator) -> OncePoster:
    client = AsyncWebClient(token=TOKEN, base_url=emu.api_url, retry_handlers=[])
    return OncePoster(StoreSet(redis), client)


async def test_a_first_post_is_tagged_and_leaves_its_intent(
    redis: Redis, emu: SlackEmulator
) -> None:
    posted = await poster(redis, emu).post(CARD, INTENT, channel="#hitl-approvals", text="card")
    assert not posted.adopted
    (message,) = emu.messages("hitl-approvals")
    assert message.ts == posted.ts
    assert message.metadata == {
        "event_type": EVENT_TYPE,
        "event_payload": {"kind": "request", "id": "r1", "slot": "card"},
    }
    assert await redis.hget(*INTENT) is not None  # the caller clears it with the ts
    assert emu.calls.count("conversations.history") == 0  # no look-up on the ordinary path


async def test_a_retry_after_a_lost_answer_adopts_the_message(
    redis: Redis, emu: SlackEmulator
) -> None:
    first = await poster(redis, emu).post(CARD, INTENT, channel="#hitl-approvals", text="card")
    # ... the process died here, before saving first.ts; a fresh one tries again:
    again = await poster(redis, emu).post(CARD, INTENT, channel="#hitl-approvals", text="card")
    assert again.adopted and (again.channel, again.ts) == (first.channel, first.ts)
    assert len(emu.messages("hitl-approvals")) == 1
    assert emu.calls.count("chat.postMessage") == 1


async def test_only_our_own_message_with_the_same_tag_is_adopted(
    redis: Redis, emu: SlackEmulator
) -> None:
    once = poster(redis, emu)
    await redis.hset(*INTENT, str(wall_ms()))  # an attempt started, Slack never took it
    # a person's message and another item's card, both newer than the intent
    await emu.post("alice", "#hitl-approvals", "hi")
    await once.client.chat_postMessage(
        channel="#hitl-approvals", text="other", metadata=Tag("request", "r2", "card").metadata()
    )
    posted = await once.post(CARD, INTENT, channel="#hitl-approvals", text="card")
    assert not posted.adopted
    assert [m.text for m in emu.messages("hitl-approvals")] == ["hi", "other", "card"]


async def test_a_card_in_a_run_thread_is_found_among_the_replies(
    redis: Redis, emu: SlackEmulator
) -> None:
    once = poster(redis, emu)
    head = await once.client.chat_postMessage(channel="#general", text="run header")
    first = await once.post(
        CARD, INTENT, channel=head["channel"], thread_ts=head["ts"], text="card"
    )
    again = await poster(redis, emu).post(
        CARD, INTENT, channel=head["channel"], thread_ts=head["ts"], text="card"
    )
    assert again.adopted and again.ts == first.ts
    assert len(emu.replies("general", head["ts"])) == 1
    assert emu.calls.count("conversations.replies") == 1


async def test_a_dm_slot_is_looked_up_in_the_dm(redis: Redis, emu: SlackEmulator) -> None:
    slot = Tag("request", "r1", "0:user:UBOB")
    intent = ("hitl:{s00}:posts:r1", "0:user:UBOB:posting")
    first = await poster(redis, emu).post(slot, intent, channel="UBOB", text="escalated")
    found = await poster(redis, emu).find(slot, "UBOB", None, intent_ms=wall_ms() - 1000)
    assert found == (first.channel, first.ts)
