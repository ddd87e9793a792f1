"""The whole workspace as one JSON document, for `GET /_emu/state`, the page and tests.

Channels list their top-level messages, each with its thread `replies` inline; ephemerals,
open modal stacks and home views are listed per user. `version` changes on every change.
"""

from __future__ import annotations

from bot.sandbox.slack.workspace import JSON, Channel, Message, User, View, Workspace


def _user(user: User) -> JSON:
    return {"id": user.id, "name": user.name, "real_name": user.real_name, "is_bot": user.is_bot}


def _message(ws: Workspace, message: Message) -> JSON:
    out = ws.message_json(message)
    out["channel"] = message.channel
    out["reactions"] = {name: list(users) for name, users in message.reactions.items()}
    return out


def _channel(ws: Workspace, channel: Channel) -> JSON:
    messages = []
    for message in channel.top_level():
        item = _message(ws, message)
        item["replies"] = [_message(ws, r) for r in channel.replies(message.ts)]
        messages.append(item)
    return {
        "id": channel.id,
        "name": channel.name,
        "kind": channel.kind,
        "members": list(channel.members),
        "messages": messages,
    }


def _view(ws: Workspace, view: View) -> JSON:
    return {
        **view.to_slack(ws.team_id, ws.app_id, ws.bot_id),
        "user": view.user,
        "errors": dict(view.errors),
        "notice": view.notice,
    }


def snapshot(ws: Workspace) -> JSON:
    return {
        "version": ws.version,
        "team": {"id": ws.team_id, "domain": ws.team_domain},
        "bot": {
            "user_id": ws.bot.id,
            "bot_id": ws.bot_id,
            "app_id": ws.app_id,
            "name": ws.bot.name,
        },
        "opening": ws.opening,
        "users": [_user(u) for u in ws.users.values()],
        "usergroups": [
            {"id": g.id, "handle": g.handle, "name": g.name, "users": list(g.users)}
            for g in ws.usergroups.values()
        ],
        "channels": [_channel(ws, c) for c in ws.channels.values()],
        "ephemerals": [e.to_json() for e in ws.ephemerals],
        "views": {
            user: [_view(ws, ws.views[v]) for v in stack if v in ws.views]
            for user, stack in ws.modal_stacks.items()
        },
        "home": {
            user: _view(ws, ws.views[v]) for user, v in ws.home_views.items() if v in ws.views
        },
        "selections": [
            {"channel": channel, "ts": ts, "user": user, "values": values}
            for (channel, ts, user), values in ws.message_state.items()
            if values
        ],
    }
