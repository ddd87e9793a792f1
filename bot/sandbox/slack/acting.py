"""Acting as a person in the workspace: who, where, and what came back from the bot."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bot.sandbox.slack.errors import ControlError
from bot.sandbox.slack.workspace import Channel, User, Workspace


@dataclass
class Outcome:
    """What happened when a person acted: the bot's HTTP answer and what the client did."""

    status: int | None  # the bot's HTTP status; None when nothing was sent or no answer came
    body: Any = None  # the bot's answer: parsed JSON, else text, else None
    error: str | None = None  # "http_timeout", "connection_failed", "client_validation", ...
    errors: dict[str, str] = field(default_factory=dict)  # modal field errors shown to the user
    view_action: str | None = None  # closed | errors | updated | pushed | cleared | kept_open
    dispatched: bool = True  # False when the client handled it alone (no request to the bot)
    trigger_id: str | None = None
    view_id: str | None = None  # the modal on top after a submission, if any

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def person(ws: Workspace, ref: str) -> User:
    """A human user by id or name; the bot cannot click buttons."""
    user = ws.find_user(ref)
    if user is None:
        raise ControlError(f"no user {ref!r}", 404)
    if user.is_bot:
        raise ControlError(f"{ref!r} is a bot; act as a person", 400)
    return user


def place(ws: Workspace, user: User, ref: str) -> Channel:
    """A channel by id or name; the bot's id or name means this user's DM with the bot."""
    if ref in (ws.bot.id, ws.bot.name, "@" + ws.bot.name):
        return ws.open_dm([user.id])
    channel = ws.find_channel(ref)
    if channel is None:
        raise ControlError(f"no channel {ref!r}", 404)
    if user.id not in channel.members:
        raise ControlError(f"{user.name} is not in {ref}", 403)
    return channel
