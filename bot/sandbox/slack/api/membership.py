"""Whether the bot is in a conversation, and what that lets it do, as Slack decides it.

- `chat.postMessage` to a conversation the bot is not a member of answers
  `not_in_channel`, unless the channel is public and the token has `chat:write.public`
  (a private one the bot is not in answers `channel_not_found`: it cannot see it).
- `conversations.info` says `is_member` honestly (workspace.py).
- The Events API sends the bot `message` events only from conversations it is a member
  of: a reply in a card's thread in a public channel it never joined never arrives.

Tests and the page move the bot in and out of a channel through `POST /_emu/members`
{channel, action: "invite" | "remove"}, or `SlackEmulator.invite_bot` / `remove_bot`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.sandbox.slack.errors import ControlError, WebApiError
from bot.sandbox.slack.workspace import Channel, Workspace

PUBLIC_POSTING = "chat:write.public"


def is_member(ws: Workspace, channel: Channel) -> bool:
    return ws.bot.id in channel.members


def check_may_post(ws: Workspace, channel: Channel) -> None:
    """Raise Slack's `not_in_channel` unless the bot may post in `channel`."""
    if is_member(ws, channel):
        return
    if channel.kind == "channel" and PUBLIC_POSTING in ws.scopes:
        return
    raise WebApiError("not_in_channel")


def hears(ws: Workspace, channel: Channel) -> bool:
    """Whether the Events API delivers the bot message events from `channel`."""
    return is_member(ws, channel)


def _find(ws: Workspace, ref: str) -> Channel:
    channel = ws.find_channel(ref)
    if channel is None or channel.kind in ("im", "mpim"):
        raise ControlError(f"no channel {ref!r}", 404)
    return channel


def invite_bot(ws: Workspace, ref: str) -> Channel:
    """`/invite @bot` in channel `ref` (id, "#name" or name)."""
    channel = _find(ws, ref)
    if not is_member(ws, channel):
        channel.members.append(ws.bot.id)
        ws.changed()
    return channel


def remove_bot(ws: Workspace, ref: str) -> Channel:
    """The bot removed from (or never invited to) channel `ref`."""
    channel = _find(ws, ref)
    if is_member(ws, channel):
        channel.members.remove(ws.bot.id)
        ws.changed()
    return channel


def membership_routes(ws: Workspace) -> list[Route]:
    async def members(request: Request) -> Response:
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        act = {"invite": invite_bot, "remove": remove_bot}
        if not isinstance(body, dict) or body.get("action") not in act or not body.get("channel"):
            return JSONResponse(
                {"error": 'give channel and action ("invite" or "remove")'}, status_code=400
            )
        try:
            channel = act[str(body["action"])](ws, str(body["channel"]))
        except ControlError as e:
            return JSONResponse({"error": e.message}, status_code=e.status)
        return JSONResponse({"channel": channel.id, "is_member": is_member(ws, channel)})

    return [Route("/_emu/members", members, methods=["POST"])]
