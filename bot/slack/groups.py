"""Which Slack user groups a person belongs to, for approver checks on `S…` ids."""

from __future__ import annotations

import json
from collections.abc import Iterable

from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.store.keys import PREFIX

CACHE_S = 300  # membership changes rarely; a click must not wait on Slack every time


async def members(redis: Redis, client: AsyncWebClient, group: str) -> set[str]:
    key = f"{PREFIX}slack:group:{group}"
    cached = await redis.get(key)
    if cached is not None:
        return set(json.loads(cached))
    resp = await client.usergroups_users_list(usergroup=group)
    users = [str(u) for u in resp.get("users") or []]
    await redis.set(key, json.dumps(users), ex=CACHE_S)
    return set(users)


async def groups_of(
    redis: Redis, client: AsyncWebClient, user: str, candidates: Iterable[str]
) -> tuple[str, ...]:
    """The candidate group ids (`S…`) that `user` is a member of."""
    found = []
    for group in candidates:
        if group.startswith("S") and user in await members(redis, client, group):
            found.append(group)
    return tuple(found)
