"""What `serve` checks in Slack at start besides the channels (bot.slack.checks.principals):
the token's scopes (bot.slack.checks.scopes) and the policy's user groups.

A user group the policy names is looked up with `usergroups.users.list`, the call a
decision makes: a group Slack does not know (or will not list) is refused at start,
naming it and where the policy uses it, as an unknown channel is. Fail closed: an
approver group that does not resolve means nobody in it can ever approve, and that
should stop the deployment, not surface as a refused click weeks later. A group with
no members is warned of.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.policy import Policy
from bot.errors import ConfigError
from bot.slack.checks import check_messages as cmsg
from bot.slack.checks.principals import START_CHECK_S, UNREACHABLE
from bot.slack.checks.scopes import (
    HEADER,
    ScopeCheck,
    compare,
    granted,
    group_uses,
    policy_needs,
)

log = logging.getLogger(__name__)


@dataclass
class GroupCheck:
    sizes: dict[str, int] = field(default_factory=dict)  # group id -> members, once resolved
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unchecked: str | None = None  # the error that kept every group unchecked (missing_scope)


@dataclass
class Preflight:
    scopes: ScopeCheck
    groups: GroupCheck

    @property
    def problems(self) -> list[str]:
        return [*self.scopes.problems, *self.groups.problems]

    @property
    def warnings(self) -> list[str]:
        return [*self.scopes.warnings, *self.groups.warnings]


async def token_scopes(client: AsyncWebClient) -> frozenset[str] | None:
    """The scopes the token was granted, as `auth.test` answers them. Raises SlackApiError
    for a refused token (invalid_auth) and a connection error for a Slack out of reach."""
    resp = await client.auth_test()
    headers = resp.headers or {}
    value = headers.get(HEADER)
    return granted(str(value) if value is not None else None)


async def check_groups(client: AsyncWebClient, policy: Policy) -> GroupCheck:
    """Look every user group the policy names up, as a decision would."""
    out = GroupCheck()
    errors: dict[str, str] = {}
    for where, name in group_uses(policy):
        if name not in out.sizes and name not in errors:
            try:
                resp = await client.usergroups_users_list(usergroup=name)
            except SlackApiError as exc:
                errors[name] = str(exc.response.get("error") or "unknown_error")
            else:
                out.sizes[name] = len(resp.get("users") or [])
        if errors.get(name) == "missing_scope":
            out.unchecked = "missing_scope"  # the scope check names it, and where
        elif name in errors:
            out.problems.append(
                cmsg.GROUP_UNKNOWN.format(where=where, name=name, error=errors[name])
            )
        elif out.sizes[name] == 0:
            out.warnings.append(cmsg.GROUP_EMPTY.format(where=where, name=name))
    return out


async def preflight(client: AsyncWebClient, policy: Policy) -> Preflight:
    """The token's scopes against the manifest and the policy, and the policy's groups."""
    scopes = compare(await token_scopes(client), policy_needs(policy))
    return Preflight(scopes, await check_groups(client, policy))


async def preflight_at_start(client: AsyncWebClient, policy: Policy) -> None:
    """`serve`'s check: refuse (ConfigError) a missing scope the policy or the bot cannot
    do without, or an unknown user group; log every other missing scope. With Slack out
    of reach, start goes on (as for channels) and says so."""
    try:
        checked = await asyncio.wait_for(preflight(client, policy), START_CHECK_S)
    except UNREACHABLE as exc:
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else repr(exc)
        log.error(cmsg.PREFLIGHT_UNCHECKED.format(error=error))
        return
    if checked.problems:
        raise ConfigError("\n".join(checked.problems))
    for warning in checked.warnings:
        log.warning(warning)
