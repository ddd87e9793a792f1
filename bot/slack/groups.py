"""Which Slack user groups and channels a person belongs to, for approver checks.

An approver principal may be a user group (`S…`, via `usergroups.users.list`) or a
channel (`C…`/`G…` or `#name`, via `conversations.members`): its members may decide.
Memberships are cached briefly in Redis; a name is resolved to an id with
`conversations.list` once (bot.slack.principals pins the policy's names at start), and
an archived channel has no members that count. A look-up that fails counts as "not a
member": fail closed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

from redis.asyncio import Redis
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.store.keys import PREFIX

CACHE_S = 300  # membership changes rarely; a click must not wait on Slack every time
PAGE = 1000
log = logging.getLogger(__name__)


def is_group(name: str) -> bool:
    return name.startswith("S")


def is_channel(name: str) -> bool:
    return name.startswith(("#", "C", "G"))


def needs_lookup(principals: Iterable[str]) -> bool:
    return any(is_group(p) or is_channel(p) for p in principals)


async def _cached(redis: Redis, key: str) -> set[str] | None:
    raw = await redis.get(key)
    return None if raw is None else set(json.loads(raw))


async def members(redis: Redis, client: AsyncWebClient, group: str) -> set[str]:
    key = f"{PREFIX}slack:group:{group}"
    if (found := await _cached(redis, key)) is not None:
        return found
    resp = await client.usergroups_users_list(usergroup=group)
    users = [str(u) for u in resp.get("users") or []]
    await redis.set(key, json.dumps(users), ex=CACHE_S)
    return set(users)


def _pin_key(name: str) -> str:
    return f"{PREFIX}slack:channel-pin:{name.removeprefix('#')}"


async def pin_channel(redis: Redis, name: str, cid: str) -> None:
    """`name` means `cid` from now on, for every process on this store (no expiry: a
    channel created or renamed later under the same name must never take its place)."""
    await redis.set(_pin_key(name), cid)


async def listed_channels(
    client: AsyncWebClient, *, exclude_archived: bool
) -> AsyncIterator[dict[str, Any]]:
    """Every channel the bot can see, page by page (`conversations.list`)."""
    cursor = ""
    while True:
        resp = await client.conversations_list(
            types="public_channel,private_channel",
            exclude_archived=exclude_archived,
            limit=PAGE,
            cursor=cursor or None,
        )
        for ch in resp.get("channels") or []:
            yield ch
        cursor = (resp.get("response_metadata") or {}).get("next_cursor") or ""
        if not cursor:
            return


async def channel_id(redis: Redis, client: AsyncWebClient, ref: str) -> str | None:
    """`#name` -> its id (`C…`), as pinned when the policy loaded; an id is returned as
    it is. A name the policy did not pin is looked up among live channels and pinned."""
    if not ref.startswith("#"):
        return ref
    if (pinned := await redis.get(_pin_key(ref))) is not None:
        return str(pinned)
    key = f"{PREFIX}slack:channel-id:{ref[1:]}"
    if (cached := await redis.get(key)) is not None:
        return str(cached) or None
    found = ""
    async for ch in listed_channels(client, exclude_archived=True):
        if ch.get("name") == ref[1:] and not ch.get("is_archived"):
            found = str(ch.get("id") or "")
            break
    if found:
        await pin_channel(redis, ref, found)
    else:  # not there yet: ask again in a while, never pin an absence
        await redis.set(key, "", ex=CACHE_S)
    return found or None


async def _archived(client: AsyncWebClient, cid: str) -> bool:
    info = (await client.conversations_info(channel=cid)).get("channel")
    return bool(isinstance(info, dict) and info.get("is_archived"))


async def channel_members(redis: Redis, client: AsyncWebClient, ref: str) -> set[str]:
    """The members of a live channel; an archived one has none that count."""
    key = f"{PREFIX}slack:channel:{ref}"
    if (found := await _cached(redis, key)) is not None:
        return found
    users: list[str] = []
    cid = await channel_id(redis, client, ref)
    if cid and await _archived(client, cid):
        cid = None
    cursor = ""
    while cid:
        resp = await client.conversations_members(channel=cid, limit=PAGE, cursor=cursor or None)
        users += [str(u) for u in resp.get("members") or []]
        cursor = (resp.get("response_metadata") or {}).get("next_cursor") or ""
        if not cursor:
            break
    await redis.set(key, json.dumps(users), ex=CACHE_S)
    return set(users)


async def groups_of(
    redis: Redis, client: AsyncWebClient, user: str, candidates: Iterable[str]
) -> tuple[str, ...]:
    """The candidate groups (`S…`) and channels (`C…`, `#name`) that `user` is a member of."""
    found = []
    for principal in candidates:
        try:
            if is_group(principal):
                inside = await members(redis, client, principal)
            elif is_channel(principal):
                inside = await channel_members(redis, client, principal)
            else:
                continue
            if user in inside:
                found.append(principal)
        except SlackApiError as exc:
            log.warning(
                "membership look-up failed",
                extra={"principal": principal, "error": exc.response.get("error")},
            )
    return tuple(found)
