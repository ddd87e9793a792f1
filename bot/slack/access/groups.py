"""Which Slack user groups and channels a person belongs to, for approver checks.

An approver principal may be a user group (`S…`, via `usergroups.users.list`) or a
channel (`C…`/`G…` or `#name`, via `conversations.members`): its members may decide.
Memberships are cached briefly in the store (bot/store/posted/slack_cache.py); a name is
resolved to an id with `conversations.list` once (bot.slack.checks.principals pins the
policy's names at start), and an archived channel has no members that count. A
look-up that fails counts as "not a member": fail closed.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.store.posted.slack_cache import SlackCache

CACHE_S = 300  # membership changes rarely; a click must not wait on Slack every time
PAGE = 1000
log = logging.getLogger(__name__)


def is_group(name: str) -> bool:
    return name.startswith("S")


def is_channel(name: str) -> bool:
    return name.startswith(("#", "C", "G"))


def needs_lookup(principals: Iterable[str]) -> bool:
    return any(is_group(p) or is_channel(p) for p in principals)


async def members(cache: SlackCache, client: AsyncWebClient, group: str) -> set[str]:
    if (found := await cache.group_members(group)) is not None:
        return found
    resp = await client.usergroups_users_list(usergroup=group)
    users = [str(u) for u in resp.get("users") or []]
    await cache.keep_group_members(group, users, CACHE_S)
    return set(users)


async def pin_channel(cache: SlackCache, name: str, cid: str) -> None:
    """`name` means `cid` from now on, for every process on this store (no expiry: a
    channel created or renamed later under the same name must never take its place)."""
    await cache.pin(name, cid)


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


async def channel_id(cache: SlackCache, client: AsyncWebClient, ref: str) -> str | None:
    """`#name` -> its id (`C…`), as pinned when the policy loaded; an id is returned as
    it is. A name the policy did not pin is looked up among live channels and pinned."""
    if not ref.startswith("#"):
        return ref
    if (pinned := await cache.pinned(ref)) is not None:
        return pinned
    if (cached := await cache.looked_up(ref)) is not None:
        return cached or None
    found = ""
    async for ch in listed_channels(client, exclude_archived=True):
        if ch.get("name") == ref[1:] and not ch.get("is_archived"):
            found = str(ch.get("id") or "")
            break
    if found:
        await pin_channel(cache, ref, found)
    else:  # not there yet: ask again in a while, never pin an absence
        await cache.keep_not_found(ref, CACHE_S)
    return found or None


async def _archived(client: AsyncWebClient, cid: str) -> bool:
    info = (await client.conversations_info(channel=cid)).get("channel")
    return bool(isinstance(info, dict) and info.get("is_archived"))


async def channel_members(cache: SlackCache, client: AsyncWebClient, ref: str) -> set[str]:
    """The members of a live channel; an archived one has none that count."""
    if (found := await cache.channel_members(ref)) is not None:
        return found
    users: list[str] = []
    cid = await channel_id(cache, client, ref)
    if cid and await _archived(client, cid):
        cid = None
    cursor = ""
    while cid:
        resp = await client.conversations_members(channel=cid, limit=PAGE, cursor=cursor or None)
        users += [str(u) for u in resp.get("members") or []]
        cursor = (resp.get("response_metadata") or {}).get("next_cursor") or ""
        if not cursor:
            break
    await cache.keep_channel_members(ref, users, CACHE_S)
    return set(users)


async def groups_of(
    cache: SlackCache, client: AsyncWebClient, user: str, candidates: Iterable[str]
) -> tuple[str, ...]:
    """The candidate groups (`S…`) and channels (`C…`, `#name`) that `user` is a member of."""
    found = []
    for principal in candidates:
        try:
            if is_group(principal):
                inside = await members(cache, client, principal)
            elif is_channel(principal):
                inside = await channel_members(cache, client, principal)
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
