"""A digest's record: what each drawing showed stays readable for a click on it, the
oldest past the cap is dropped, and redraws of one group take turns (real Valkey)."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.store.posted.digests import VIEWS_KEPT, Digests, group_id


async def test_a_drawing_is_kept_until_enough_newer_ones_push_it_out(redis: Redis) -> None:
    d = Digests(redis)
    g = group_id("C1", "billing-agent", "refund")
    for i in range(VIEWS_KEPT + 3):
        await d.save_view(g, f"{i:064x}", [[f"r{i}", 1, "0" * 64, ""]])
    assert [await d.view(g, f"{i:064x}") for i in range(3)] == [None] * 3
    assert await d.view(g, f"{3:064x}") == [["r3", 1, "0" * 64, ""]]
    newest = VIEWS_KEPT + 2
    assert await d.view(g, f"{newest:064x}") == [[f"r{newest}", 1, "0" * 64, ""]]
    await d.save_view(g, f"{3:064x}", [["again", 2, "1" * 64, ""]])  # drawn again: kept
    assert await d.view(g, f"{3:064x}") == [["again", 2, "1" * 64, ""]]


async def test_groups_are_told_apart_and_a_redraw_mark_is_taken_once(redis: Redis) -> None:
    assert group_id("C1", "a", "refund") != group_id("C1", "a", "refunds")
    assert group_id("C1", "a:b", "c") != group_id("C1", "a", "b:c")
    d = Digests(redis)
    g = group_id("C1", "a", "refund")
    await d.mark_dirty(g)
    assert await d.take_dirty(g) and not await d.take_dirty(g)
    first, second = d.lease(g, "serve-a", 10), d.lease(g, "serve-b", 10)
    assert await first.take() and not await second.take()
    await first.release()
    assert await second.take()
