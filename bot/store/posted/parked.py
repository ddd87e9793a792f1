"""Notices no message could be drawn for: parked on their item, counted, acknowledged.

A notice whose delivery raises an error nobody planned for (a bug, or a record no card
can show, such as one an older version or a writer without the API's checks stored)
raises again on every retry. Left pending it was retried forever and took the whole
notifier down each time, so every other card waited behind it (issue 41). Parked, the
item says why (`hitl-bot pending`, `hitl-bot show ID` read it), `/metrics` counts it,
and the stream moves on. A card drawn later clears it (`Cards.save_request_card`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from redis.asyncio import Redis

from bot.store import keys
from bot.store.stream.events import Notice

FIELD = "card_error"  # on the item's hash: "EVENT: what went wrong"
COUNTER = "hitl_notices_parked_total"
HELP = {COUNTER: "Notices the Slack notifier could not deliver for good, parked and acked."}
MAX_WHY = 300  # characters of the error kept: enough to tell it, never a whole record


def item_key(n: Notice) -> str | None:
    if n.kind == "request":
        return keys.request(n.id)
    if n.kind == "question":
        return keys.question(n.id)
    if n.kind == "run":
        return keys.run(n.id)
    return None  # a steer notice's item is a Slack message: nothing of ours to mark


def why_of(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_WHY else text[: MAX_WHY - 1] + "…"


async def park(redis: Redis, n: Notice, group: str, why: str) -> None:
    """Say on the item why its message could not be drawn, then count and acknowledge
    the notice in one step (the counter lives beside the stream, in its slot)."""
    key = item_key(n)
    if key is not None and await redis.exists(key):  # never a stray hash for a gone item
        await redis.hset(key, FIELD, f"{n.event}: {why}")
    pipe = redis.pipeline(transaction=True)
    pipe.hincrby(keys.metrics(keys.shard_of_key(n.stream)), COUNTER, 1)
    pipe.xack(n.stream, group, n.entry_id)
    await pipe.execute()


async def reasons(redis: Redis, rids: Sequence[str]) -> dict[str, str]:
    """Why each of these requests has no card drawn, for those that have a reason."""
    pipe = redis.pipeline(transaction=False)
    for rid in rids:
        pipe.hget(keys.request(rid), FIELD)
    got = cast(list[str | None], await pipe.execute())
    return {rid: why for rid, why in zip(rids, got, strict=True) if why}
