"""The emulated workspace: users, user groups, channels, messages, ephemerals and views.

Plain data plus lookups; no I/O. Every mutation bumps `version` so the page can tell
when to redraw.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.sandbox.slack.ids import Ids

JSON = dict[str, Any]
ChannelKind = Literal["channel", "group", "im", "mpim"]
SLACKBOT = "USLACKBOT"


@dataclass
class User:
    id: str
    name: str
    real_name: str
    is_bot: bool = False
    bot_id: str | None = None
    # Set for a member of another workspace (Slack Connect): their own team's id.
    team_id: str | None = None

    def to_slack(self, team_id: str) -> JSON:
        team_id = self.team_id or team_id
        return {
            "id": self.id,
            "team_id": team_id,
            "name": self.name,
            "real_name": self.real_name,
            "deleted": False,
            "is_bot": self.is_bot,
            "is_app_user": False,
            "is_admin": False,
            "tz": "UTC",
            "tz_offset": 0,
            "profile": {
                "real_name": self.real_name,
                "display_name": self.name,
                "bot_id": self.bot_id,
                "team": team_id,
            },
        }


@dataclass
class UserGroup:
    id: str
    handle: str
    users: list[str]
    name: str = ""


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    user: str | None
    bot_id: str | None = None
    app_id: str | None = None
    blocks: list[JSON] | None = None
    thread_ts: str | None = None
    edited: JSON | None = None
    reactions: dict[str, list[str]] = field(default_factory=dict)
    metadata: JSON | None = None
    client_msg_id: str | None = None
    # A person's message that Slack sends with a subtype all the same: a thread reply
    # also sent to the channel ("thread_broadcast"), or one with a file ("file_share").
    subtype: str | None = None
    files: list[JSON] | None = None

    def is_reply(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts


@dataclass
class Ephemeral:
    channel: str
    user: str
    ts: str
    text: str
    blocks: list[JSON] | None = None
    thread_ts: str | None = None
    bot_id: str | None = None
    sender: str | None = None

    def to_json(self) -> JSON:
        return {
            "type": "message",
            "channel": self.channel,
            "user": self.user,
            "sender": self.sender,
            "bot_id": self.bot_id,
            "ts": self.ts,
            "text": self.text,
            "blocks": self.blocks or [],
            "thread_ts": self.thread_ts,
            "is_ephemeral": True,
        }


@dataclass
class Channel:
    id: str
    name: str
    kind: ChannelKind = "channel"
    members: list[str] = field(default_factory=list)
    created: int = 1_700_000_000
    messages: dict[str, Message] = field(default_factory=dict)
    is_archived: bool = False

    def top_level(self) -> list[Message]:
        return [m for m in self.messages.values() if not m.is_reply()]

    def replies(self, thread_ts: str) -> list[Message]:
        return [m for m in self.messages.values() if m.is_reply() and m.thread_ts == thread_ts]

    def to_slack(self, bot_user: str) -> JSON:
        info: JSON = {
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "is_channel": self.kind == "channel",
            "is_group": self.kind == "group",
            "is_im": self.kind == "im",
            "is_mpim": self.kind == "mpim",
            "is_private": self.kind != "channel",
            "is_archived": self.is_archived,
            "is_member": bot_user in self.members,  # public or not: Slack says whether it joined
        }
        if self.kind == "im":
            others = [u for u in self.members if u != bot_user]
            info["user"] = others[0] if others else bot_user
        return info


@dataclass
class View:
    """One modal (or home tab) as the user sees it: the bot's definition plus client state."""

    id: str
    user: str
    definition: JSON
    hash: str
    root_view_id: str
    previous_view_id: str | None = None
    values: dict[str, dict[str, JSON]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    notice: str | None = None  # a client-side message, e.g. "We had some trouble connecting"

    @property
    def type(self) -> str:
        return str(self.definition.get("type", "modal"))

    @property
    def external_id(self) -> str:
        return str(self.definition.get("external_id") or "")

    def blocks(self) -> list[JSON]:
        blocks = self.definition.get("blocks") or []
        return [b for b in blocks if isinstance(b, dict)]

    def to_slack(self, team_id: str, app_id: str, bot_id: str) -> JSON:
        d = self.definition
        return {
            "id": self.id,
            "team_id": team_id,
            "type": self.type,
            "title": d.get("title"),
            "submit": d.get("submit"),
            "close": d.get("close"),
            "blocks": self.blocks(),
            "private_metadata": d.get("private_metadata", ""),
            "callback_id": d.get("callback_id", ""),
            "external_id": self.external_id,
            "state": {"values": self.values},
            "hash": self.hash,
            "clear_on_close": bool(d.get("clear_on_close", False)),
            "notify_on_close": bool(d.get("notify_on_close", False)),
            "root_view_id": self.root_view_id,
            "previous_view_id": self.previous_view_id,
            "app_id": app_id,
            "app_installed_team_id": team_id,
            "bot_id": bot_id,
        }


def channel_id_for(name: str) -> str:
    """The readable id of a channel made from a name: "hitl-approvals" -> "CHITLAPPROVALS"."""
    return "C" + re.sub(r"[^A-Z0-9]", "", name.upper())


class Workspace:
    """All state, keyed the way Slack keys it."""

    def __init__(
        self,
        *,
        ids: Ids,
        bot: User,
        users: list[User],
        channels: list[Channel],
        usergroups: list[UserGroup],
        team_id: str = "TEMULATOR",
        team_domain: str = "hitl-emulator",
        app_id: str = "AHITLBOT",
        scopes: Iterable[str] = (),
    ) -> None:
        if bot.bot_id is None:
            raise ValueError("the bot user needs a bot_id")
        self.ids = ids
        self.bot = bot
        self.bot_id: str = bot.bot_id
        self.team_id = team_id
        self.team_domain = team_domain
        self.app_id = app_id
        self._scopes = frozenset(scopes)
        self._initial = copy.deepcopy((users, channels, usergroups))
        self.version = 0
        # Where the page opens (user, channel name, a hint line, a draft): the demo sets it
        # to the first step its banner tells; None opens as the first person.
        self.opening: JSON | None = None
        self.reset()

    def reset(self) -> None:
        """Back to the users, channels and groups it was made with, and nothing else."""
        users, channels, usergroups = copy.deepcopy(self._initial)
        # the bot token's scopes, as made; a test may take one away (membership.py)
        self.scopes: set[str] = set(self._scopes)
        self.users: dict[str, User] = {u.id: u for u in [self.bot, *users]}
        self.usergroups: dict[str, UserGroup] = {g.id: g for g in usergroups}
        self.channels: dict[str, Channel] = {c.id: c for c in channels}
        for channel in channels:
            if channel.kind == "channel" and not channel.members:
                channel.members = list(self.users)
        self.ephemerals: list[Ephemeral] = []
        self.views: dict[str, View] = {}
        self.modal_stacks: dict[str, list[str]] = {}
        self.home_views: dict[str, str] = {}
        # what a user picked in a message's selects before clicking a button: Slack's
        # client sends it back as `state.values`
        self.message_state: dict[tuple[str, str, str], dict[str, dict[str, JSON]]] = {}
        self.changed()

    def changed(self) -> None:
        self.version += 1

    # --- lookups -----------------------------------------------------------------------

    def find_user(self, ref: str) -> User | None:
        """By id ("UALICE") or name ("alice", "@alice")."""
        if ref in self.users:
            return self.users[ref]
        name = ref.removeprefix("@")
        return next((u for u in self.users.values() if u.name == name), None)

    def find_channel(self, ref: str) -> Channel | None:
        """By id, "#name" or bare name; a user id means the DM with that user, opened on demand."""
        if ref in self.channels:
            return self.channels[ref]
        name = ref.removeprefix("#")
        found = next((c for c in self.channels.values() if c.name == name), None)
        if found is None and ref in self.users and ref != self.bot.id:
            found = self.open_dm([ref])
        return found

    def find_message(self, channel: str, ts: str) -> Message | None:
        found = self.channels.get(channel)
        return found.messages.get(ts) if found else None

    def find_ephemeral(self, channel: str, ts: str) -> Ephemeral | None:
        return next((e for e in self.ephemerals if e.channel == channel and e.ts == ts), None)

    def find_view(self, view_id: str = "", external_id: str = "") -> View | None:
        if view_id:
            return self.views.get(view_id)
        return next((v for v in self.views.values() if v.external_id == external_id), None)

    def top_view(self, user: str) -> View | None:
        stack = self.modal_stacks.get(user) or []
        return self.views.get(stack[-1]) if stack else None

    def home_view(self, user: str) -> View | None:
        view_id = self.home_views.get(user)
        return self.views.get(view_id) if view_id else None

    # --- changes -----------------------------------------------------------------------

    def open_dm(self, user_ids: list[str]) -> Channel:
        """The bot's DM (or group DM) with these users, created on first use."""
        members = sorted({self.bot.id, *user_ids})
        for channel in self.channels.values():
            if channel.kind in ("im", "mpim") and sorted(channel.members) == members:
                return channel
        kind: ChannelKind = "im" if len(members) <= 2 else "mpim"
        channel_id = self.ids.object_id("D" if kind == "im" else "G")
        channel = Channel(channel_id, "", kind, members, int(self.ids.clock()))
        channel.name = channel_id if kind == "im" else "mpdm-" + "--".join(members)
        self.channels[channel_id] = channel
        self.changed()
        return channel

    def add_message(self, message: Message) -> Message:
        channel = self.channels[message.channel]
        if message.thread_ts is not None:
            parent = channel.messages.get(message.thread_ts)
            if parent is not None and parent.thread_ts is None:
                parent.thread_ts = parent.ts
        channel.messages[message.ts] = message
        self.changed()
        return message

    def add_ephemeral(self, ephemeral: Ephemeral) -> Ephemeral:
        self.ephemerals.append(ephemeral)
        self.changed()
        return ephemeral

    def delete_message(self, channel: str, ts: str) -> bool:
        found = self.channels.get(channel)
        if found is None or found.messages.pop(ts, None) is None:
            return False
        self.changed()
        return True

    def delete_ephemeral(self, ephemeral: Ephemeral) -> None:
        self.ephemerals.remove(ephemeral)
        self.changed()

    # --- Slack shapes ------------------------------------------------------------------

    def message_json(self, message: Message) -> JSON:
        """A message as `conversations.replies` and interaction payloads show it."""
        author = self.users.get(message.user or "")
        team = (author.team_id if author else None) or self.team_id
        out: JSON = {
            "type": "message",
            "ts": message.ts,
            "text": message.text,
            "team": team,
        }
        if message.user is not None:
            out["user"] = message.user
        if team != self.team_id:  # Slack Connect: the author's own workspace
            out["user_team"] = out["source_team"] = team
        if message.bot_id is not None:
            out["bot_id"] = message.bot_id
            out["app_id"] = message.app_id
            out["bot_profile"] = {
                "id": message.bot_id,
                "app_id": message.app_id,
                "name": self.bot.name,
                "team_id": self.team_id,
            }
        if message.blocks is not None:
            out["blocks"] = message.blocks
        for key in ("client_msg_id", "subtype", "files", "edited", "metadata"):
            if (value := getattr(message, key)) is not None:  # Slack omits what is unset
                out[key] = value
        if message.reactions:
            out["reactions"] = [
                {"name": name, "users": users, "count": len(users)}
                for name, users in message.reactions.items()
            ]
        if message.thread_ts is not None:
            out["thread_ts"] = message.thread_ts
            channel = self.channels[message.channel]
            if message.is_reply():
                parent = channel.messages.get(message.thread_ts)
                if parent is not None and parent.user is not None:
                    out["parent_user_id"] = parent.user
            else:
                replies = channel.replies(message.ts)
                out["reply_count"] = len(replies)
                out["reply_users"] = sorted({r.user for r in replies if r.user})
                out["reply_users_count"] = len(out["reply_users"])
                out["latest_reply"] = replies[-1].ts if replies else message.ts
        return out
