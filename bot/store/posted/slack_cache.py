"""What the Slack side remembers between processes: memberships, channel ids, seen events.

Memberships of user groups and channels, and a `#name` looked up but not found, are
cached for `ttl_s` (the caller's choice); a name resolved to an id is pinned for good,
so a channel created or renamed later under the same name never takes its place. A
Slack event id is recorded once, so a retried event is acted on once. The names Slack
shows for ids serve looked up are kept for the operator's CLI, which has no Slack token.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from redis.asyncio import Redis

from bot.store import keys


class SlackCache:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def _members(self, key: str) -> set[str] | None:
        raw = await self.redis.get(key)
        return None if raw is None else set(json.loads(raw))

    async def group_members(self, group: str) -> set[str] | None:
        """The cached members of a user group; None when not cached."""
        return await self._members(keys.slack_group(group))

    async def keep_group_members(self, group: str, users: Iterable[str], ttl_s: int) -> None:
        await self.redis.set(keys.slack_group(group), json.dumps(list(users)), ex=ttl_s)

    async def channel_members(self, ref: str) -> set[str] | None:
        return await self._members(keys.slack_channel_members(ref))

    async def keep_channel_members(self, ref: str, users: Iterable[str], ttl_s: int) -> None:
        await self.redis.set(keys.slack_channel_members(ref), json.dumps(list(users)), ex=ttl_s)

    async def keep_names(self, names: dict[str, str], ttl_s: int) -> None:
        pipe = self.redis.pipeline(transaction=False)  # one key each: any slot, any node
        for principal, shown in names.items():
            pipe.set(keys.slack_name(principal), shown, ex=ttl_s)
        await pipe.execute()

    async def names(self, ids: Iterable[str]) -> dict[str, str]:
        """`id -> name` for the ids whose name is kept; the others are left out."""
        wanted = list(dict.fromkeys(ids))
        pipe = self.redis.pipeline(transaction=False)
        for principal in wanted:
            pipe.get(keys.slack_name(principal))
        got = await pipe.execute() if wanted else []
        return {p: str(n) for p, n in zip(wanted, got, strict=True) if n}

    async def pinned(self, name: str) -> str | None:
        """The id `#name` was pinned to, if it was."""
        got = await self.redis.get(keys.slack_channel_pin(name))
        return None if got is None else str(got)

    async def pin(self, name: str, cid: str) -> None:
        await self.redis.set(keys.slack_channel_pin(name), cid)

    async def looked_up(self, name: str) -> str | None:
        """A recent look-up of `#name`: "" if it found nothing; None if there was none."""
        got = await self.redis.get(keys.slack_channel_id(name))
        return None if got is None else str(got)

    async def keep_not_found(self, name: str, ttl_s: int) -> None:
        await self.redis.set(keys.slack_channel_id(name), "", ex=ttl_s)

    async def first_sight(self, event_id: str, ttl_s: int) -> bool:
        """True the first time `event_id` is seen (within `ttl_s`), False for a retry."""
        return bool(await self.redis.set(keys.seen_event(event_id), "1", nx=True, ex=ttl_s))
