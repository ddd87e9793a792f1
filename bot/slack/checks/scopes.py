"""The bot token's scopes: what manifest.yml asks for, what the policy needs, and what
the token was granted.

Slack sends the granted scopes in the `x-oauth-scopes` header of every Web API answer
(`auth.test` included); a call lacking one answers `missing_scope`. A token installed
without `usergroups:read` used to start without a word, and every approver named by a
user group then counted as "not a member" at decision time: nobody could approve.
`serve` (at start), `hitl-bot policy check` and `hitl-bot doctor` compare the grant with
`WANTED` (held to manifest.yml by a test) and with what the policy names:

- a scope nothing works without, or one the policy needs, is a problem (serve refuses
  to start: fail closed, as for an unknown channel);
- any other scope of the manifest that is missing is a warning naming what breaks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.core.policy import Policy
from bot.slack.access.groups import is_channel, is_group
from bot.slack.checks import check_messages as cmsg
from bot.slack.checks.principals import channel_uses

HEADER = "x-oauth-scopes"

# Every bot scope manifest.yml asks for, and what breaks without it.
WANTED: dict[str, str] = {
    "app_mentions:read": cmsg.BREAKS_MENTIONS,
    "channels:history": cmsg.BREAKS_CHANNEL_HISTORY,
    "channels:read": cmsg.BREAKS_CHANNELS_READ,
    "groups:read": cmsg.BREAKS_GROUPS_READ,
    "groups:history": cmsg.BREAKS_GROUPS_HISTORY,
    "chat:write": cmsg.BREAKS_CHAT_WRITE,
    "chat:write.public": cmsg.BREAKS_CHAT_WRITE_PUBLIC,
    "commands": cmsg.BREAKS_COMMANDS,
    "im:write": cmsg.BREAKS_IM_WRITE,
    "im:history": cmsg.BREAKS_IM_HISTORY,
    "reactions:write": cmsg.BREAKS_REACTIONS,
    "usergroups:read": cmsg.BREAKS_USERGROUPS,
    "users:read": cmsg.BREAKS_USERS_READ,
}
ESSENTIAL = ("chat:write",)  # no card reaches anyone without it, whatever the policy


def granted(header: str | None) -> frozenset[str] | None:
    """The scopes an `x-oauth-scopes` header lists (None: no header, nothing to compare)."""
    if header is None:
        return None
    return frozenset(s.strip() for s in header.split(",") if s.strip())


def policy_needs(policy: Policy) -> dict[str, str]:
    """scope -> the first place in the policy that needs it."""
    needs: dict[str, str] = {}
    for where, name in group_uses(policy):
        needs.setdefault("usergroups:read", f"{where}: {name}")
    for where, name, _tier, _decides in channel_uses(policy):
        if is_channel(name):
            scope = "groups:read" if name.startswith("G") else "channels:read"
            needs.setdefault(scope, f"{where}: {name}")
    return needs


def group_uses(policy: Policy) -> list[tuple[str, str]]:
    """(where in the file, group id) for every user group the policy names."""
    found: list[tuple[str, str]] = []
    for tier, tp in policy.tiers.items():
        base = f"tiers.{tier.value}"
        found += [(f"{base}.approvers", n) for n in tp.approvers if is_group(n)]
        found += [(f"{base}.reviewers.groups", n) for n in tp.reviewers.groups]
        for i, lvl in enumerate(tp.escalation):
            found += [(f"{base}.escalation.{i}.groups", n) for n in lvl.groups]
    found += [("operators", n) for n in policy.operators if is_group(n)]
    return found


@dataclass(frozen=True)
class Missing:
    scope: str
    breaks: str
    needed_by: str | None  # where the policy needs it; None: wanted by the manifest only

    @property
    def blocking(self) -> bool:
        return self.needed_by is not None or self.scope in ESSENTIAL

    def sentence(self) -> str:
        if self.needed_by is not None:
            return cmsg.SCOPE_NEEDED.format(
                scope=self.scope, where=self.needed_by, breaks=self.breaks
            )
        return cmsg.SCOPE_MISSING.format(scope=self.scope, breaks=self.breaks)


@dataclass
class ScopeCheck:
    granted: frozenset[str] | None
    missing: list[Missing] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [m.sentence() for m in self.missing if m.blocking]

    @property
    def warnings(self) -> list[str]:
        if self.granted is None:
            return [cmsg.SCOPES_UNREAD.format(header=HEADER)]
        return [m.sentence() for m in self.missing if not m.blocking]


def compare(grant: Iterable[str] | None, needs: Mapping[str, str]) -> ScopeCheck:
    """What the token lacks of the manifest's scopes and of what the policy needs."""
    if grant is None:
        return ScopeCheck(None)
    have = frozenset(grant)
    wanted = {**WANTED, **{s: WANTED.get(s, "") for s in needs}}
    missing = [
        Missing(scope, breaks, needs.get(scope))
        for scope, breaks in wanted.items()
        if scope not in have
    ]
    missing.sort(key=lambda m: (not m.blocking, m.scope))
    return ScopeCheck(have, missing)
