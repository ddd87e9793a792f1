"""`hitl-bot doctor`'s Slack lines: the token and its scopes, the bot's membership of every
channel the policy names, the policy's user groups, and Socket Mode or the events URL.

Self-contained on purpose: it asks Slack itself (`conversations.info`'s `is_member`)
rather than through serve's start checks, so each finding is one line with its fix.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.cli import messages as msg
from bot.cli.doctor_lines import Line, fail, passed, warn
from bot.config import Settings
from bot.core.policy import Policy
from bot.slack import messages as smsg
from bot.slack.access.groups import is_channel, listed_channels
from bot.slack.checks.preflight import check_groups
from bot.slack.checks.principals import UNREACHABLE, channel_uses
from bot.slack.checks.scopes import WANTED, compare, granted, group_uses, policy_needs

EVENTS_TIMEOUT_S = 10


async def token_lines(settings: Settings, client: AsyncWebClient) -> tuple[list[Line], bool]:
    """The token line; True when Slack accepted the token (the other Slack lines run)."""
    if settings.slack_bot_token is None:
        return [fail("slack token", msg.DOCTOR_NO_TOKEN, msg.DOCTOR_NO_TOKEN_FIX)], False
    try:
        resp = await client.auth_test()
    except SlackApiError as exc:
        error = str(exc.response.get("error"))
        return [
            fail(
                "slack token",
                msg.DOCTOR_TOKEN_REFUSED.format(error=error),
                msg.DOCTOR_TOKEN_REFUSED_FIX,
            )
        ], False
    except UNREACHABLE as exc:
        text = msg.DOCTOR_SLACK_UNREACHABLE.format(url=settings.slack_api_url, error=exc)
        return [fail("slack token", text, msg.DOCTOR_SLACK_UNREACHABLE_FIX)], False
    text = msg.DOCTOR_TOKEN_OK.format(
        user=resp.get("user"),
        user_id=resp.get("user_id"),
        team=resp.get("team"),
        url=resp.get("url"),
    )
    return [passed("slack token", text)], True


async def scope_lines(client: AsyncWebClient, policy: Policy | None) -> list[Line]:
    resp = await client.auth_test()
    header = (resp.headers or {}).get("x-oauth-scopes")
    check = compare(
        granted(None if header is None else str(header)), policy_needs(policy) if policy else {}
    )
    if check.granted is None:
        return [warn("scopes", w) for w in check.warnings]
    lines = [(fail if m.blocking else warn)("scopes", m.sentence()) for m in check.missing]
    return lines or [passed("scopes", msg.DOCTOR_SCOPES_OK.format(n=len(WANTED)))]


def _posts_to(policy: Policy) -> set[str]:
    """The channels the bot posts in: review channels and escalation levels."""
    found: set[str] = set()
    for tp in policy.tiers.values():
        found.update(tp.reviewers.channels)
        for lvl in tp.escalation:
            found.update(lvl.channels)
    return found


async def _resolve(client: AsyncWebClient, name: str, listing: dict[str, str]) -> str | None:
    if not name.startswith("#"):
        return name
    if not listing:
        async for ch in listed_channels(client, exclude_archived=False):
            listing.setdefault(str(ch.get("name")), str(ch.get("id")))
        listing.setdefault("", "")  # looked once, even when empty
    return listing.get(name[1:])


async def channel_lines(client: AsyncWebClient, policy: Policy) -> list[Line]:
    """One line per channel the policy names: unknown, archived, or the bot's membership."""
    uses: dict[str, list[str]] = {}
    for where, name, _tier, _decides in channel_uses(policy):
        if is_channel(name):
            uses.setdefault(name, []).append(where)
    posts, listing, lines = _posts_to(policy), dict[str, str](), []
    for name, wheres in uses.items():
        where = ", ".join(wheres)
        fix = msg.DOCTOR_INVITE_FIX.format(name=name)
        try:
            cid = await _resolve(client, name, listing)
            info: dict[str, Any] | None = None
            if cid:
                found = (await client.conversations_info(channel=cid)).get("channel")
                info = found if isinstance(found, dict) else None
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
            if error != "channel_not_found":
                text = msg.DOCTOR_CHANNEL_LOOKUP_FAILED.format(name=name, error=error)
                lines.append(fail("channel", text, fix))
                continue
            info = None
        if info is None:
            unknown = smsg.CHANNEL_UNKNOWN if name.startswith("#") else msg.DOCTOR_CHANNEL_HIDDEN
            lines.append(fail("channel", unknown.format(where=where, name=name), fix))
            continue
        cid = str(info.get("id") or cid)
        if info.get("is_archived"):
            text = smsg.CHANNEL_ARCHIVED.format(where=where, name=name, id=cid)
            lines.append(fail("channel", text))
            continue
        private = bool(info.get("is_private"))
        kind = "private" if private else "public"
        if info.get("is_member"):
            text = msg.DOCTOR_CHANNEL_MEMBER.format(name=name, id=cid, kind=kind, where=where)
            lines.append(passed("channel", text))
            continue
        if name in posts:
            breaks, status = msg.DOCTOR_NOT_MEMBER_POSTS, fail
        elif private:
            breaks, status = msg.DOCTOR_NOT_MEMBER_PRIVATE, fail
        else:
            breaks, status = msg.DOCTOR_NOT_MEMBER_LISTED, warn
        text = msg.DOCTOR_CHANNEL_NOT_MEMBER.format(
            name=name, id=cid, kind=kind, where=where, breaks=breaks
        )
        lines.append(status("channel", text, fix))
    return lines or [passed("channel", msg.DOCTOR_NO_CHANNELS)]


async def group_lines(client: AsyncWebClient, policy: Policy) -> list[Line]:
    uses = group_uses(policy)
    if not uses:
        return [passed("user group", msg.DOCTOR_NO_GROUPS)]
    checked = await check_groups(client, policy)
    if checked.unchecked:
        return [fail("user group", msg.DOCTOR_GROUPS_UNCHECKED)]
    lines = [fail("user group", p) for p in checked.problems]
    lines += [warn("user group", w) for w in checked.warnings]
    wheres: dict[str, list[str]] = {}
    for where, name in uses:
        wheres.setdefault(name, []).append(where)
    for name, n in checked.sizes.items():
        if n:
            where = ", ".join(wheres[name])
            lines.append(
                passed("user group", msg.DOCTOR_GROUP_OK.format(name=name, n=n, where=where))
            )
    return lines


def _signed(secret: str, body: bytes) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": "v0=" + digest.hexdigest(),
        "Content-Type": "application/json",
    }


async def events_lines(settings: Settings, events_url: str | None) -> list[Line]:
    """Socket Mode: Slack takes the app token. HTTP: the events URL answers Slack's
    signed challenge, as Slack checks it when the Request URL is saved."""
    if settings.slack_app_token is not None:
        app = AsyncWebClient(base_url=settings.slack_api_url, timeout=EVENTS_TIMEOUT_S)
        try:
            await app.apps_connections_open(app_token=settings.slack_app_token.get_secret_value())
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
            return [
                fail("events", msg.DOCTOR_SOCKET_REFUSED.format(error=error), msg.DOCTOR_SOCKET_FIX)
            ]
        except UNREACHABLE as exc:
            text = msg.DOCTOR_SLACK_UNREACHABLE.format(url=settings.slack_api_url, error=exc)
            return [fail("events", text, msg.DOCTOR_SLACK_UNREACHABLE_FIX)]
        return [passed("events", msg.DOCTOR_SOCKET_OK)]
    if settings.slack_signing_secret is None:
        return [fail("events", msg.DOCTOR_NO_SECRET, msg.DOCTOR_NO_SECRET_FIX)]
    if events_url is None:
        return [warn("events", msg.DOCTOR_EVENTS_UNCHECKED, msg.DOCTOR_EVENTS_UNCHECKED_FIX)]
    challenge = "hitl-doctor-" + hashlib.sha256(str(time.time()).encode()).hexdigest()[:12]
    body = json.dumps({"type": "url_verification", "challenge": challenge}).encode()
    headers = _signed(settings.slack_signing_secret.get_secret_value(), body)
    try:
        async with httpx.AsyncClient(timeout=EVENTS_TIMEOUT_S) as http:
            resp = await http.post(events_url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        why = repr(exc)
    else:
        if resp.status_code == 200 and challenge in resp.text:
            return [passed("events", msg.DOCTOR_EVENTS_OK.format(url=events_url))]
        why = f"HTTP {resp.status_code}"
    text = msg.DOCTOR_EVENTS_BAD.format(url=events_url, why=why)
    return [fail("events", text, msg.DOCTOR_EVENTS_FIX)]


async def slack_lines(
    settings: Settings, policy: Policy | None, events_url: str | None
) -> list[Line]:
    from bot.slack.transport.client import web_client

    client = web_client(settings)
    lines, ok = await token_lines(settings, client)
    if not ok:
        skipped = [warn(c, msg.DOCTOR_SLACK_SKIPPED) for c in ("scopes", "channel", "user group")]
        return [*lines, *skipped, *await events_lines(settings, events_url)]
    lines += await scope_lines(client, policy)
    if policy is None:
        lines += [warn(c, msg.DOCTOR_POLICY_SKIPPED) for c in ("channel", "user group")]
    else:
        lines += await channel_lines(client, policy)
        lines += await group_lines(client, policy)
    return [*lines, *await events_lines(settings, events_url)]
