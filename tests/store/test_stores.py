"""The stores the layers above hold instead of a client: the run list, the run audit, the
thread index, the Slack cache and the card refs, against a real server."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import RunState
from bot.store import keys
from bot.store.run.run_audit import RUN_AUDIT_TTL_S
from bot.store.run.threads import CARDS_TTL_S
from bot.store.stores import StoreSet


async def test_the_run_list_holds_every_run_newest_first_and_nothing_else(
    redis: Redis, clock: FakeClock
) -> None:
    store = StoreSet(redis, clock=clock)
    first = await store.runs.start(agent="claw", prompt="one", requester="U1")
    clock.advance(1)
    second = await store.runs.start(agent="claw", prompt="two", requester="U1")
    await store.runs.save_transcript(first.id, [{"role": "user", "content": "one"}])
    await store.run_audit.append(first.id, {"kind": "resumed"})
    await store.runs.update(second.id, state=RunState.FINISHED)
    listed = await store.runs.list()
    assert [r.id for r in listed] == [second.id, first.id]
    assert {r.id: r.state for r in listed} == {
        first.id: RunState.QUEUED,
        second.id: RunState.FINISHED,
    }


async def test_an_expired_run_is_left_out_of_the_list(redis: Redis) -> None:
    store = StoreSet(redis)
    run = await store.runs.start(agent="claw", prompt="one", requester="U1")
    await redis.delete(keys.run(run.id))
    await store.cards.set_thread_link(run.id, "https://example.slack.com/p1")  # a late write
    assert await store.runs.list() == []


async def test_the_run_audit_is_one_list_with_one_expiry(redis: Redis) -> None:
    store = StoreSet(redis)
    await store.run_audit.append("run-a", {"kind": "refused", "actor": "Ü"})
    await store.run_audit.append("run-a", {"kind": "run_end"})
    assert [e["kind"] for e in await store.run_audit.entries("run-a")] == ["refused", "run_end"]
    assert (await store.run_audit.entries("run-a"))[0]["actor"] == "Ü"
    assert RUN_AUDIT_TTL_S - 5 < await redis.ttl(keys.run_audit("run-a")) <= RUN_AUDIT_TTL_S


async def test_the_thread_index_knows_the_cards_of_a_thread(redis: Redis) -> None:
    store = StoreSet(redis)
    assert not await store.threads.has_cards("C1", "1.0")
    await store.threads.add_card("C1", "1.0", "r1")
    await store.threads.add_card("C1", "1.0", "r2")
    assert await store.threads.has_cards("C1", "1.0")
    assert await store.threads.cards("C1", "1.0") == {"r1", "r2"}
    assert await store.threads.cards("C1", "2.0") == set()
    assert await redis.ttl(keys.thread_cards("C1", "1.0")) > CARDS_TTL_S - 5


async def test_a_slack_event_is_seen_once_and_a_pin_outlives_the_cache(redis: Redis) -> None:
    cache = StoreSet(redis).slack
    assert await cache.first_sight("Ev1", 60)
    assert not await cache.first_sight("Ev1", 60)
    await cache.keep_not_found("#ops", 60)
    assert await cache.looked_up("#ops") == ""
    await cache.pin("#ops", "C9")
    assert await cache.pinned("ops") == "C9"
    assert await redis.ttl(keys.slack_channel_pin("#ops")) == -1  # never expires
    await cache.keep_group_members("S1", ["U1", "U2"], 60)
    assert await cache.group_members("S1") == {"U1", "U2"}
    assert await cache.channel_members("#ops") is None


async def test_a_cards_intent_is_kept_from_the_first_attempt_until_the_ts_is_saved(
    redis: Redis,
) -> None:
    cards = StoreSet(redis).cards
    intent = cards.request_intent("r1")
    await cards.mark_intent(intent, 1_000)
    await cards.mark_intent(intent, 2_000)  # a later attempt keeps the first time
    assert await cards.intent_started(intent) == 1_000
    await cards.save_request_card("r1", "C1", "1.5", view="v1")
    ref = await cards.request_card("r1")
    assert (ref.channel, ref.ts, ref.extra) == ("C1", "1.5", None)
    assert await redis.hget(keys.request("r1"), "msg_view") == "v1"
    await cards.save_post("r1", "0:user:U1", "D1", "2.5")
    await cards.level_done("r1", 0)
    assert await cards.posts("r1") == {"0:user:U1": "D1 2.5", "0:done": "1"}
