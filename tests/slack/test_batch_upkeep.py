"""Two notifiers (as in two `serve` processes) keeping the same digest: one message, whatever
order and overlap their redraws come in (emulator + real Valkey)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import Decision
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.sandbox.slack import SlackEmulator
from bot.slack.batch import card
from bot.slack.batch.upkeep import DigestKeeper
from bot.slack.delivery.once import OncePoster
from bot.store.posted.digests import group_id
from bot.store.stores import StoreSet
from tests.conftest import QUORUM_POLICY
from tests.support.clients import CLUSTER

TOKEN = "xoxb-digest"
POLICY = parse_policy(QUORUM_POLICY)


@pytest.fixture
async def emu() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator(bot_token=TOKEN) as emu:
        yield emu


def keeper(redis: Redis, emu: SlackEmulator, name: str) -> DigestKeeper:
    rt = StoreSet(redis)
    client = AsyncWebClient(token=TOKEN, base_url=emu.api_url, retry_handlers=[])
    return DigestKeeper(rt, client, OncePoster(rt, client), holder=name)


def digests(emu: SlackEmulator) -> list[str]:
    return [
        m.text
        for m in emu.messages("hitl-approvals")
        if any(b.get("block_id", "").startswith("hitl_digest") for b in m.blocks or [])
    ]


async def carded(redis: Redis, emu: SlackEmulator, n: int) -> list[str]:
    """`n` waiting refunds, each with its card posted where the notifier would post it."""
    rt = StoreSet(redis)
    client = AsyncWebClient(token=TOKEN, base_url=emu.api_url)
    rids = []
    for i in range(n):
        made = await rt.requests.create(
            POLICY, tool="refund", args={"amount": i + 1, "currency": "EUR"}, requester="bill"
        )
        posted = await client.chat_postMessage(channel="#hitl-approvals", text=f"card {i}")
        await rt.cards.save_request_card(made.request.id, posted["channel"], posted["ts"])
        rids.append(made.request.id)
    return rids


async def test_two_notifiers_redrawing_at_once_post_one_digest(
    redis: Redis, emu: SlackEmulator
) -> None:
    rids = await carded(redis, emu, 6)
    a, b = keeper(redis, emu, "serve-a"), keeper(redis, emu, "serve-b")
    emu.add_delay(0.2, count=4, method="chat.postMessage")  # a slow post: the race is wide
    await asyncio.gather(*(k.touch(r) for r in rids for k in (a, b)))
    assert digests(emu) == ["6 refund calls from bill wait for review"]
    assert emu.calls.count("chat.postMessage") == 6 + 1  # the cards, then one digest
    updates = emu.calls.count("chat.update")
    await asyncio.gather(*(k.touch(r) for r in rids for k in (a, b)))  # retried notices
    assert emu.calls.count("chat.update") == updates  # nothing changed: Slack not called

    rt = StoreSet(redis)
    for rid in rids[:4]:  # decided elsewhere: each notifier hears of it
        req = await rt.requests.get(rid)
        d = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
        await rt.requests.transition(rid, d)
    await asyncio.gather(*(k.touch(r) for r in rids[:4] for k in (b, a)))
    (closed,) = digests(emu)
    assert "Fewer than three" in closed
    assert emu.calls.count("chat.postMessage") == 6 + 1  # closed in place, never posted again


async def _request_reads(redis: Redis) -> int:
    """HGETALLs the server has run (commandstats): a request read is one."""
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_hgetall", {}).get("calls", 0))


@pytest.mark.skipif(CLUSTER, reason="commandstats are per node on a cluster")
async def test_a_redraw_reads_the_rows_it_shows_not_the_whole_backlog(
    redis: Redis, emu: SlackEmulator
) -> None:
    rids = await carded(redis, emu, 3 * card.MAX_ROWS)
    k = keeper(redis, emu, "serve-a")
    for rid in rids:
        await k.touch(rid)
    (text,) = digests(emu)
    later = f"and {2 * card.MAX_ROWS} more waiting"
    shown = [m for m in emu.messages("hitl-approvals") if later in json.dumps(m.blocks)]
    assert text.startswith(f"{card.MAX_ROWS} refund calls") and shown

    before = await _request_reads(redis)
    await k.redraw(group_id(*await _group_of(redis, rids[0])))
    # the rows shown and the digest's own record; never the 3 x MAX_ROWS waiting
    assert await _request_reads(redis) - before <= card.MAX_ROWS + 3

    rt = StoreSet(redis)
    for rid in rids[-5:]:  # the newest, decided elsewhere: not on the card, but counted
        req = await rt.requests.get(rid)
        d = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=req.payload_hash)
        await rt.requests.transition(rid, d)
        await k.touch(rid)
    fewer = f"and {2 * card.MAX_ROWS - 5} more waiting"
    assert [m for m in emu.messages("hitl-approvals") if fewer in json.dumps(m.blocks)]


async def _group_of(redis: Redis, rid: str) -> tuple[str, str, str]:
    rt = StoreSet(redis)
    ref = await rt.cards.request_card(rid)
    req = await rt.requests.get(rid)
    assert ref.channel
    return ref.channel, req.requester, req.tool
