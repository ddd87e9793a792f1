"""The record of a batch digest card: one per (channel, requester, tool) group.

The notifier keeps, per group, the requests waiting there in an index ordered by when
they were filed (and each one's card permalink), so a redraw reads the count and the
rows it shows, never the whole backlog; where the digest message is; and what each
drawing of it showed (keyed by its view hash), so a click on "Approve all" decides
exactly the calls that person saw, whichever process drew them. All of a group's keys
share its hash tag.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, cast

from redis.asyncio import Redis

from bot.db.lease import Lease
from bot.store import keys
from bot.store.posted.cards import POSTING, CardRef, Intent

TTL_S = 30 * 86_400  # a group quiet for a month is forgotten
VIEWS_KEPT = 64  # past this many drawings, the older ones are dropped (their clicks refused)
SHOWS = "msg_view"  # the hash of the blocks the digest shows: the same again, no update
DIRTY = "dirty"  # set by a notifier that found the redraw lease taken: redraw once more


def group_id(channel: str, requester: str, tool: str) -> str:
    """The group's id: the same for every process, safe in a key and a button value."""
    raw = json.dumps([channel, requester, tool], separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class Digests:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def join(
        self, group: str, rid: str, created_at: int, link: str, meta: dict[str, str]
    ) -> None:
        """`rid` waits in the group, ordered by `created_at`; `meta` names the group
        (channel, requester, tool)."""
        index = keys.digest_index(group)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(index, {rid: created_at})
        pipe.hset(keys.digest_members(group), rid, link)
        pipe.hset(keys.digest(group), mapping=meta)  # type: ignore[arg-type]
        for key in (keys.digest(group), keys.digest_members(group), index):
            pipe.expire(key, TTL_S)
        await pipe.execute()

    async def oldest(self, group: str, n: int) -> list[str]:
        """The ids of the `n` oldest calls listed (ties: by id, as Redis orders them)."""
        return cast(list[str], await self.redis.zrange(keys.digest_index(group), 0, n - 1))

    async def size(self, group: str) -> int:
        """How many calls the group lists, read from its index alone."""
        return int(await self.redis.zcard(keys.digest_index(group)))

    async def links(self, group: str, rids: list[str]) -> dict[str, str]:
        """Request id -> the permalink of its card ("" when Slack gave none), for `rids`."""
        if not rids:
            return {}
        got = cast(list[str | None], await self.redis.hmget(keys.digest_members(group), rids))
        return {rid: link or "" for rid, link in zip(rids, got, strict=True)}

    async def has(self, group: str, rid: str) -> bool:
        return await self.redis.zscore(keys.digest_index(group), rid) is not None

    async def leave(self, group: str, rids: list[str]) -> None:
        if rids:
            pipe = self.redis.pipeline(transaction=True)
            pipe.zrem(keys.digest_index(group), *rids)
            pipe.hdel(keys.digest_members(group), *rids)
            await pipe.execute()

    async def unindexed(self, group: str) -> list[str]:
        """Members kept before the index existed (an older release): [] once indexed."""
        if await self.redis.exists(keys.digest_index(group)):
            return []
        return cast(list[str], await self.redis.hkeys(keys.digest_members(group)))

    async def index(self, group: str, created: dict[str, int]) -> None:
        """List already-known members in the index (the upgrade from an older release)."""
        if created:
            await self.redis.zadd(keys.digest_index(group), created)
            await self.redis.expire(keys.digest_index(group), TTL_S)

    async def meta(self, group: str) -> dict[str, str]:
        return cast(dict[str, str], await self.redis.hgetall(keys.digest(group)))

    # -- the digest message -----------------------------------------------------------

    def intent(self, group: str) -> Intent:
        return keys.digest(group), POSTING

    async def card(self, group: str) -> tuple[CardRef, str | None]:
        """Where the digest is (`extra`: the intent of a post never saved), and the hash
        of the blocks it shows."""
        fields = ["msg_channel", "msg_ts", POSTING, SHOWS]
        got = cast(list[str | None], await self.redis.hmget(keys.digest(group), fields))
        return CardRef(got[0], got[1], got[2]), got[3]

    async def save_card(self, group: str, channel: str, ts: str, shows: str = "") -> None:
        pipe = self.redis.pipeline(transaction=True)
        mapping = {"msg_channel": channel, "msg_ts": ts, SHOWS: shows}
        pipe.hset(keys.digest(group), mapping=mapping)  # type: ignore[arg-type]
        pipe.hdel(keys.digest(group), POSTING)
        await pipe.execute()

    async def set_shows(self, group: str, shows: str) -> None:
        await self.redis.hset(keys.digest(group), SHOWS, shows)

    async def forget_card(self, group: str) -> None:
        """The digest was taken down: the next group of three gets a new message."""
        await self.redis.hdel(keys.digest(group), "msg_channel", "msg_ts", POSTING, SHOWS)

    # -- what each drawing showed -------------------------------------------------------

    async def save_view(self, group: str, view_hash: str, shown: list[list[Any]]) -> None:
        """Keep what a drawing shows; past `VIEWS_KEPT` drawings the oldest is dropped
        (a click on it is refused as stale)."""
        views, order = keys.digest_views(group), keys.digest_view_order(group)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(views, view_hash, json.dumps(shown, separators=(",", ":")))
        pipe.lrem(order, 0, view_hash)
        pipe.lpush(order, view_hash)
        pipe.lrange(order, VIEWS_KEPT, -1)
        pipe.ltrim(order, 0, VIEWS_KEPT - 1)
        for key in (views, order):
            pipe.expire(key, TTL_S)
        dropped = cast(list[str], (await pipe.execute())[3])
        if dropped:
            await self.redis.hdel(views, *dropped)

    async def view(self, group: str, view_hash: str) -> list[list[Any]] | None:
        """The calls a drawing showed, as [id, version, payload hash, link]; None: unknown."""
        raw = await self.redis.hget(keys.digest_views(group), view_hash)
        return None if raw is None else cast(list[list[Any]], json.loads(raw))

    # -- one redraw at a time --------------------------------------------------------------

    def lease(self, group: str, holder: str, seconds: int) -> Lease:
        return Lease(self.redis, keys.digest_lease(group), holder, seconds)

    async def mark_dirty(self, group: str) -> None:
        await self.redis.hset(keys.digest(group), DIRTY, "1")

    async def take_dirty(self, group: str) -> bool:
        """Whether a redraw was asked for while the lease was held (and clear the ask)."""
        return bool(await self.redis.hdel(keys.digest(group), DIRTY))
