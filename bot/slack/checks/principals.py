"""The policy's channel principals, resolved in Slack once, when the policy loads.

A `#name` resolved at decision time can be made to mean anything: a channel archived
long ago still lists its former members, and a name that does not exist yet can be
created by anyone, who is then an approver. So `serve` (at start) and `hitl-bot policy
check` (when it can reach Slack) look every channel up once:

- an unknown or archived channel is refused, naming it and where the policy uses it;
- each `#name` is pinned to its id in Redis, and decisions read the pin
  (`bot.slack.access.groups.channel_id`), so a channel renamed or created later under the
  same name never becomes an approver;
- a public channel as approvers of a high or critical tier draws a loud warning:
  anyone in the workspace can join it;
- a review or escalation channel the bot is not a member of draws a warning with the
  fix (/invite): Slack refuses its cards there (`not_in_channel`), and even where
  `chat:write.public` lets them through, Slack sends the bot no replies from it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import RiskTier
from bot.core.policy import TIER_ORDER, Policy
from bot.errors import ConfigError
from bot.slack import messages as smsg
from bot.slack.access.groups import is_channel, listed_channels, pin_channel
from bot.slack.transport import refusal_messages as rmsg
from bot.store.posted.slack_cache import SlackCache

log = logging.getLogger(__name__)
# What a Slack that cannot be reached raises through the Web API client.
UNREACHABLE = (SlackApiError, aiohttp.ClientError, OSError, TimeoutError)
# A Slack that hangs must not hold the API and the sweeper back: past this, start goes on
# and each name is resolved at its first decision instead.
START_CHECK_S = 5
GUARDED = (RiskTier.HIGH, RiskTier.CRITICAL)  # tiers whose approvers must not be public


@dataclass
class ChannelCheck:
    ids: dict[str, str] = field(default_factory=dict)  # principal -> channel id
    # channel the bot posts to but is not a member of -> where the policy names it
    strangers: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # refuse the policy
    warnings: list[str] = field(default_factory=list)  # say loudly, then go on


def channel_uses(policy: Policy) -> Iterator[tuple[str, str, RiskTier | None, bool]]:
    """(where in the file, principal, tier, decides?) for every channel the policy names."""
    for tier in TIER_ORDER:
        tp = policy.tiers[tier]
        base = f"tiers.{tier.value}"
        deciders = set(tp.deciders())
        for name in tp.approvers:
            yield f"{base}.approvers", name, tier, True
        for name in tp.reviewers.channels:
            yield f"{base}.reviewers.channels", name, tier, name in deciders
        for i, lvl in enumerate(tp.escalation):
            for name in lvl.channels:
                yield f"{base}.escalation.{i}.channels", name, tier, False
    for name in policy.operators:
        yield "operators", name, None, False


async def _listed(client: AsyncWebClient) -> dict[str, dict[str, Any]]:
    """Every channel the bot can see, archived ones included (so they can be named)."""
    found: dict[str, dict[str, Any]] = {}
    async for ch in listed_channels(client, exclude_archived=False):
        found.setdefault(str(ch.get("name")), ch)
    return found


async def _info(client: AsyncWebClient, cid: str) -> dict[str, Any] | None:
    try:
        resp = await client.conversations_info(channel=cid)
    except SlackApiError as exc:
        if exc.response.get("error") == "channel_not_found":
            return None
        raise
    channel = resp.get("channel")
    return dict(channel) if isinstance(channel, dict) else None


async def check_channels(client: AsyncWebClient, policy: Policy) -> ChannelCheck:
    """Look every channel principal up in Slack. Raises SlackApiError (or a connection
    error) when Slack cannot answer; an unknown or archived channel is a problem."""
    out = ChannelCheck()
    seen: dict[str, dict[str, Any] | None] = {}
    listing: dict[str, dict[str, Any]] | None = None
    for where, name, tier, decides in channel_uses(policy):
        if not is_channel(name):
            continue
        if name not in seen:
            if name.startswith("#"):
                listing = listing if listing is not None else await _listed(client)
                seen[name] = listing.get(name[1:])
            else:
                seen[name] = await _info(client, name)
        info = seen[name]
        if info is None:
            out.problems.append(smsg.CHANNEL_UNKNOWN.format(where=where, name=name))
            continue
        cid = str(info.get("id") or "")
        if info.get("is_archived"):
            out.problems.append(smsg.CHANNEL_ARCHIVED.format(where=where, name=name, id=cid))
            continue
        out.ids[name] = cid
        if _posted_to(where) and info.get("is_member") is False:
            out.strangers.setdefault(name, []).append(where)
        if decides and tier in GUARDED and not info.get("is_private"):
            out.warnings.append(
                smsg.CHANNEL_PUBLIC_APPROVERS.format(where=where, name=name, tier=tier.value)
            )
    out.problems = list(dict.fromkeys(out.problems))
    out.warnings = list(dict.fromkeys(out.warnings))
    if out.strangers:
        out.warnings += await _not_member_warnings(client, out.strangers)
    return out


def _posted_to(where: str) -> bool:
    """Whether the bot posts cards where the policy names this channel: its review and
    escalation channels (approvers and operators are only looked up)."""
    return where.endswith(".reviewers.channels") or (
        ".escalation." in where and where.endswith(".channels")
    )


async def _not_member_warnings(
    client: AsyncWebClient, strangers: dict[str, list[str]]
) -> list[str]:
    """One warning per channel the bot is not in, with the fix. Slack lists the token's
    scopes on every answer (`x-oauth-scopes`): with them, say whether cards post there."""
    bot, scopes = "hitl-bot", None
    try:
        got = await client.auth_test()
        bot = str(got.get("user") or bot)
        listed = (got.headers or {}).get("x-oauth-scopes") or (got.headers or {}).get(
            "X-OAuth-Scopes"
        )
        if listed is not None:
            scopes = {s.strip() for s in str(listed).split(",")}
    except UNREACHABLE as exc:
        log.info("no bot name from auth.test: %r", exc)
    posts = None if scopes is None else "chat:write.public" in scopes
    return [
        rmsg.not_member(", ".join(wheres), name, bot, posts=posts)
        for name, wheres in strangers.items()
    ]


async def pin_all(cache: SlackCache, check: ChannelCheck) -> None:
    """Decisions use these ids from now on: a `#name` means the channel it meant at start."""
    for name, cid in check.ids.items():
        if name.startswith("#"):
            await pin_channel(cache, name, cid)


async def resolve_at_start(cache: SlackCache, client: AsyncWebClient, policy: Policy) -> None:
    """`serve`'s check: refuse an unknown or archived channel (ConfigError), warn loudly of
    a public channel approving a high or critical tier, and pin every name to its id.

    With Slack unreachable the bot still starts (its outbox waits for Slack anyway); each
    name is then resolved, among live channels only, at its first decision and pinned."""
    try:
        checked = await asyncio.wait_for(check_channels(client, policy), START_CHECK_S)
    except UNREACHABLE as exc:
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else repr(exc)
        log.error(smsg.CHANNELS_UNCHECKED.format(error=error))
        return
    if checked.problems:
        raise ConfigError("\n".join(checked.problems))
    for warning in checked.warnings:
        log.warning(warning)
    await pin_all(cache, checked)
