"""The scopes each bot token was granted, as Slack enforces and reports them.

Every Web API answer to a known token carries its scopes in the `x-oauth-scopes` header,
and a method whose scope the token lacks answers `missing_scope` with `needed` and
`provided` (comma-separated), as Slack does. A token starts with every scope manifest.yml
asks for; `grant(token, scopes)` installs it with fewer (or more).

The table covers the methods the bot calls, from Slack's method reference. The
`conversations.*` readers need the scope of the conversation's kind (`channels:read` for
a public channel, `groups:read` for a private one, ...); `conversations.list` needs the
scope of every type it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bot.sandbox.slack.api.api_common import Args, arg_str
from bot.sandbox.slack.errors import WebApiError
from bot.sandbox.slack.workspace import Workspace
from bot.slack.checks.scopes import HEADER, WANTED

__all__ = ["HEADER", "TokenScopes", "needed"]

FIXED: dict[str, str] = {
    "chat.postMessage": "chat:write",
    "chat.update": "chat:write",
    "chat.postEphemeral": "chat:write",
    "conversations.open": "im:write",
    "users.info": "users:read",
    "usergroups.list": "usergroups:read",
    "usergroups.users.list": "usergroups:read",
    "reactions.add": "reactions:write",
    "reactions.remove": "reactions:write",
}
BY_KIND: dict[str, str] = {  # method -> the suffix of its per-kind scope
    "conversations.info": "read",
    "conversations.members": "read",
    "conversations.history": "history",
    "conversations.replies": "history",
}
KIND_PREFIX = {"channel": "channels", "group": "groups", "im": "im", "mpim": "mpim"}
TYPE_PREFIX = {
    "public_channel": "channels",
    "private_channel": "groups",
    "im": "im",
    "mpim": "mpim",
}


def needed(ws: Workspace, method: str, args: Args) -> list[str]:
    """The scopes `method` needs for these arguments (empty: none, e.g. auth.test)."""
    if method in FIXED:
        return [FIXED[method]]
    if method in BY_KIND:
        found = ws.find_channel(arg_str(args, "channel"))
        prefix = KIND_PREFIX[found.kind] if found is not None else "channels"
        return [f"{prefix}:{BY_KIND[method]}"]
    if method == "conversations.list":
        types = arg_str(args, "types", "public_channel").split(",")
        return [f"{TYPE_PREFIX[t.strip()]}:read" for t in types if t.strip() in TYPE_PREFIX]
    return []


class TokenScopes:
    """The bot token's scopes are its workspace's (`Workspace.scopes`, which the membership
    rules read too: `chat:write.public`), so what a call may do and what the header says
    come from one set. Another token has none it was not granted."""

    def __init__(self, workspace: Callable[[], Workspace], bot_token: str) -> None:
        self._ws = workspace
        self._bot = bot_token
        self.default = frozenset(WANTED)
        self._granted: dict[str, frozenset[str]] = {}

    def grant(self, token: str, scopes: Iterable[str]) -> None:
        """From now on `token` holds exactly `scopes` (as a reinstall would)."""
        if token == self._bot:
            held = self._ws().scopes
            held.clear()
            held.update(scopes)
        else:
            self._granted[token] = frozenset(scopes)

    def clear(self) -> None:
        """Other tokens' grants forgotten (emu.reset(); the workspace's reset gives the
        bot token back the scopes it was made with)."""
        self._granted.clear()

    def of(self, token: str) -> frozenset[str]:
        if token == self._bot:
            return frozenset(self._ws().scopes)
        return self._granted.get(token, frozenset())

    def header(self, token: str) -> dict[str, str]:
        return {HEADER: ",".join(sorted(self.of(token)))}

    def check(self, ws: Workspace, method: str, args: Args, token: str) -> None:
        have = self.of(token)
        lacking = [s for s in needed(ws, method, args) if s not in have]
        if lacking:
            raise WebApiError(
                "missing_scope", needed=",".join(lacking), provided=",".join(sorted(have))
            )
