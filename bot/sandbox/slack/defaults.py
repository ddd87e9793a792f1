"""The workspace a fresh emulator starts with: a family, three colleagues and the bot.

Channel ids are the upper-cased names without punctuation (`#hitl-approvals` is
`CHITLAPPROVALS`) so tests can name them without a lookup. Every public channel made
without members has them all, the bot included (workspace.py).
"""

from __future__ import annotations

from bot.sandbox.slack.workspace import Channel, User, UserGroup, channel_id_for

BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
BOT_NAME = "hitl-bot"


def default_bot() -> User:
    return User(BOT_USER_ID, BOT_NAME, BOT_NAME, is_bot=True, bot_id=BOT_ID)


def default_users() -> list[User]:
    return [
        User("UKID", "kid", "Kid"),
        User("UPARENT", "parent", "Parent"),
        User("UALICE", "alice", "Alice Approver"),
        User("UBOB", "bob", "Bob Oncall"),
        User("UCAROL", "carol", "Carol Lead"),
    ]


# The bot scopes manifest.yml asks for: the token a fresh emulator hands out has them all.
BOT_SCOPES = (
    "app_mentions:read",
    "channels:history",
    "channels:read",
    "groups:read",
    "groups:history",
    "chat:write",
    "chat:write.public",
    "commands",
    "im:write",
    "im:history",
    "reactions:write",
    "usergroups:read",
    "users:read",
)

DEFAULT_CHANNEL_NAMES = (
    "general",
    "hitl-approvals",
    "hitl-oncall",
    "hitl-team",
    "hitl-leads",
    "hitl-pager",
)


def channel_named(name: str) -> Channel:
    return Channel(channel_id_for(name), name)


def default_channels() -> list[Channel]:
    return [channel_named(name) for name in DEFAULT_CHANNEL_NAMES]


def default_usergroups() -> list[UserGroup]:
    return [
        UserGroup("SAPPROVERS", "approvers", ["UALICE", "UBOB"], "Approvers"),
        UserGroup("SONCALL", "oncall", ["UBOB"], "On-call"),
        UserGroup("SLEADS", "leads", ["UCAROL"], "Leads"),
        UserGroup("SFINANCE", "finance", ["UALICE", "UCAROL"], "Finance"),
        UserGroup("SPARENTS", "parents", ["UPARENT"], "Parents"),
    ]
