"""Web API methods about identity, messages, conversations, users and reactions.

Each handler takes the context and the call's arguments and returns Slack's success body,
or raises WebApiError with Slack's error code.
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.slack.api.api_common import (
    ApiContext,
    Args,
    Handler,
    arg_blocks,
    arg_bool,
    arg_int,
    arg_json,
    arg_str,
)
from bot.sandbox.slack.api.membership import check_may_post
from bot.sandbox.slack.errors import WebApiError
from bot.sandbox.slack.workspace import JSON, Channel, Ephemeral, Message

MAX_TEXT = 40_000


def auth_test(ctx: ApiContext, args: Args) -> JSON:
    ws = ctx.ws
    return {
        "ok": True,
        "url": ctx.base_url() + "/",
        "team": ws.team_domain,
        "user": ws.bot.name,
        "team_id": ws.team_id,
        "user_id": ws.bot.id,
        "bot_id": ws.bot_id,
        "is_enterprise_install": False,
    }


def _channel(ctx: ApiContext, args: Args, name: str = "channel") -> Channel:
    channel = ctx.ws.find_channel(arg_str(args, name))
    if channel is None:
        raise WebApiError("channel_not_found")
    if channel.kind != "channel" and ctx.ws.bot.id not in channel.members:
        raise WebApiError("channel_not_found")
    return channel


def _message(channel: Channel, ts: str) -> Message:
    message = channel.messages.get(ts)
    if message is None:
        raise WebApiError("message_not_found")
    return message


def _thread_ts(channel: Channel, args: Args) -> str | None:
    thread_ts = arg_str(args, "thread_ts") or None
    if thread_ts is None:
        return None
    parent = channel.messages.get(thread_ts)
    if parent is None:
        raise WebApiError("thread_not_found")
    return parent.thread_ts if parent.is_reply() else parent.ts


def _text_and_blocks(ctx: ApiContext, args: Args) -> tuple[str, list[JSON] | None]:
    text = arg_str(args, "text")
    blocks = arg_blocks(ctx, args)
    if not text and not blocks:
        raise WebApiError("no_text")
    if len(text) > MAX_TEXT:
        raise WebApiError("msg_too_long")
    return text, blocks


def post_message(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    check_may_post(ctx.ws, channel)
    text, blocks = _text_and_blocks(ctx, args)
    ws = ctx.ws
    message = Message(
        channel=channel.id,
        ts=ctx.ids.ts(),
        text=text,
        user=ws.bot.id,
        bot_id=ws.bot_id,
        app_id=ws.app_id,
        blocks=blocks,
        thread_ts=_thread_ts(channel, args),
        metadata=arg_json(args, "metadata"),
    )
    ws.add_message(message)
    if ctx.on_bot_message is not None:
        ctx.on_bot_message(message, False)
    return {
        "ok": True,
        "channel": channel.id,
        "ts": message.ts,
        "message": ws.message_json(message),
    }


def update_message(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    message = _message(channel, arg_str(args, "ts"))
    if message.bot_id != ctx.ws.bot_id:
        raise WebApiError("cant_update_message")
    blocks = arg_blocks(ctx, args)
    if "text" in args:
        message.text = arg_str(args, "text")
    if blocks is not None:
        message.blocks = blocks
    if not message.text and not message.blocks:
        raise WebApiError("no_text")
    if "metadata" in args:
        message.metadata = arg_json(args, "metadata")
    message.edited = {"user": ctx.ws.bot.id, "ts": ctx.ids.ts()}
    ctx.ws.changed()
    if ctx.on_bot_message is not None:
        ctx.on_bot_message(message, True)
    return {
        "ok": True,
        "channel": channel.id,
        "ts": message.ts,
        "text": message.text,
        "message": ctx.ws.message_json(message),
    }


def post_ephemeral(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    user = ctx.ws.find_user(arg_str(args, "user"))
    if user is None:
        raise WebApiError("user_not_found")
    if user.id not in channel.members:
        raise WebApiError("user_not_in_channel")
    text, blocks = _text_and_blocks(ctx, args)
    ephemeral = Ephemeral(
        channel=channel.id,
        user=user.id,
        ts=ctx.ids.ts(),
        text=text,
        blocks=blocks,
        thread_ts=_thread_ts(channel, args),
        bot_id=ctx.ws.bot_id,
        sender=ctx.ws.bot.id,
    )
    ctx.ws.add_ephemeral(ephemeral)
    return {"ok": True, "message_ts": ephemeral.ts}


def get_permalink(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    message = _message(channel, arg_str(args, "message_ts"))
    link = f"{ctx.base_url()}/archives/{channel.id}/p{message.ts.replace('.', '')}"
    if message.is_reply():
        link += f"?thread_ts={message.thread_ts}&cid={channel.id}"
    return {"ok": True, "channel": channel.id, "permalink": link}


def conversations_open(ctx: ApiContext, args: Args) -> JSON:
    if arg_str(args, "channel"):
        channel = _channel(ctx, args)
    else:
        raw = args.get("users") or ""
        refs = raw if isinstance(raw, list) else [u for u in str(raw).split(",") if u.strip()]
        if not refs:
            raise WebApiError("users_list_not_supplied")
        users = [ctx.ws.find_user(str(ref).strip()) for ref in refs]
        if any(u is None for u in users):
            raise WebApiError("user_not_found")
        channel = ctx.ws.open_dm([u.id for u in users if u is not None])
    if arg_bool(args, "return_im"):
        return {"ok": True, "channel": channel.to_slack(ctx.ws.bot.id)}
    return {"ok": True, "channel": {"id": channel.id}}


def conversations_info(ctx: ApiContext, args: Args) -> JSON:
    return {"ok": True, "channel": _channel(ctx, args).to_slack(ctx.ws.bot.id)}


def _ts_arg(args: Args, name: str, default: float) -> float:
    raw = arg_str(args, name)
    try:
        return float(raw) if raw else default
    except ValueError as e:
        raise WebApiError(f"invalid_ts_{name}") from e


def _in_window(args: Args, messages: list[Message]) -> list[Message]:
    """Slack's `oldest` / `latest` (exclusive unless `inclusive`) over message timestamps."""
    oldest = _ts_arg(args, "oldest", 0.0)
    latest = _ts_arg(args, "latest", float("inf"))
    inclusive = arg_bool(args, "inclusive")

    def inside(m: Message) -> bool:
        ts = float(m.ts)
        if inclusive:
            return oldest <= ts <= latest
        return oldest < ts < latest

    return [m for m in messages if inside(m)]


def _page(ctx: ApiContext, args: Args, messages: list[Message]) -> JSON:
    limit = max(1, min(arg_int(args, "limit", 1000), 1000))
    start = arg_int(args, "cursor", 0)
    page = messages[start : start + limit]
    more = start + limit < len(messages)
    shown = [ctx.ws.message_json(m) for m in page]
    if not arg_bool(args, "include_all_metadata"):
        # Slack returns message metadata from history only when asked for it
        for m in shown:
            m.pop("metadata", None)
    return {
        "ok": True,
        "messages": shown,
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }


def conversations_replies(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    message = channel.messages.get(arg_str(args, "ts"))
    if message is None:
        raise WebApiError("thread_not_found")
    parent_ts = message.thread_ts if message.is_reply() else message.ts
    parent = channel.messages[parent_ts or message.ts]
    return _page(ctx, args, [parent, *_in_window(args, channel.replies(parent.ts))])


def conversations_history(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    return _page(ctx, args, list(reversed(_in_window(args, channel.top_level()))))


def users_info(ctx: ApiContext, args: Args) -> JSON:
    user = ctx.ws.find_user(arg_str(args, "user"))
    if user is None:
        raise WebApiError("user_not_found")
    return {"ok": True, "user": user.to_slack(ctx.ws.team_id)}


def _cursor_page(args: Args, items: list[Any]) -> tuple[list[Any], JSON]:
    limit = max(1, min(arg_int(args, "limit", 100), 1000))
    start = arg_int(args, "cursor", 0)
    more = start + limit < len(items)
    return items[start : start + limit], {"next_cursor": str(start + limit) if more else ""}


def conversations_list(ctx: ApiContext, args: Args) -> JSON:
    kinds = {"public_channel": "channel", "private_channel": "group", "im": "im", "mpim": "mpim"}
    wanted = {kinds[t] for t in arg_str(args, "types", "public_channel").split(",") if t in kinds}
    live_only = arg_bool(args, "exclude_archived")
    found = [
        c.to_slack(ctx.ws.bot.id)
        for c in ctx.ws.channels.values()
        if c.kind in wanted
        and (c.kind == "channel" or ctx.ws.bot.id in c.members)
        and not (live_only and c.is_archived)
    ]
    page, meta = _cursor_page(args, found)
    return {"ok": True, "channels": page, "response_metadata": meta}


def conversations_members(ctx: ApiContext, args: Args) -> JSON:
    channel = _channel(ctx, args)
    page, meta = _cursor_page(args, [u for u in channel.members if u != ctx.ws.bot.id])
    return {"ok": True, "members": page, "response_metadata": meta}


def usergroups_users_list(ctx: ApiContext, args: Args) -> JSON:
    group = ctx.ws.usergroups.get(arg_str(args, "usergroup"))
    if group is None:
        raise WebApiError("no_such_subteam")
    return {"ok": True, "users": list(group.users)}


def _reaction_target(ctx: ApiContext, args: Args) -> tuple[Message, str]:
    channel = _channel(ctx, args)
    message = _message(channel, arg_str(args, "timestamp"))
    name = arg_str(args, "name").strip(":")
    if not name:
        raise WebApiError("invalid_name")
    return message, name


def reactions_add(ctx: ApiContext, args: Args) -> JSON:
    message, name = _reaction_target(ctx, args)
    users = message.reactions.setdefault(name, [])
    if ctx.ws.bot.id in users:
        raise WebApiError("already_reacted")
    users.append(ctx.ws.bot.id)
    ctx.ws.changed()
    return {"ok": True}


def reactions_remove(ctx: ApiContext, args: Args) -> JSON:
    message, name = _reaction_target(ctx, args)
    users = message.reactions.get(name, [])
    if ctx.ws.bot.id not in users:
        raise WebApiError("no_reaction")
    users.remove(ctx.ws.bot.id)
    if not users:
        del message.reactions[name]
    ctx.ws.changed()
    return {"ok": True}


METHODS: dict[str, Handler] = {
    "auth.test": auth_test,
    "chat.postMessage": post_message,
    "chat.update": update_message,
    "chat.postEphemeral": post_ephemeral,
    "chat.getPermalink": get_permalink,
    "conversations.open": conversations_open,
    "conversations.info": conversations_info,
    "conversations.replies": conversations_replies,
    "conversations.history": conversations_history,
    "conversations.list": conversations_list,
    "conversations.members": conversations_members,
    "users.info": users_info,
    "usergroups.users.list": usergroups_users_list,
    "reactions.add": reactions_add,
    "reactions.remove": reactions_remove,
}
