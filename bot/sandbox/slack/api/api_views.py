"""Web API methods for modals and the App Home: views.open / push / update / publish.

A user has one modal stack (at most 3 views deep) and one home view. `views.open` and
`views.push` need a fresh trigger_id; `views.update` and `views.publish` check `hash`.
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.slack.api.api_common import ApiContext, Args, Handler, arg_json, arg_str
from bot.sandbox.slack.blockkit import MAX_VIEW_BLOCKS, validate_blocks, with_generated_ids
from bot.sandbox.slack.errors import WebApiError
from bot.sandbox.slack.ids import Ids
from bot.sandbox.slack.workspace import JSON, View

MAX_STACK = 3


def _invalid(messages: list[str]) -> WebApiError:
    return WebApiError(
        "invalid_arguments",
        response_metadata={"messages": [f"[ERROR] {m}" for m in messages]},
    )


def _title_errors(view: JSON, key: str, required: bool) -> list[str]:
    value = view.get(key)
    if value is None:
        return [f"missing required field: {key} [json-pointer:/view/{key}]"] if required else []
    if not isinstance(value, dict) or value.get("type") != "plain_text":
        return [f"must be a plain_text object [json-pointer:/view/{key}]"]
    if not 0 < len(str(value.get("text", ""))) <= 24:
        return [f"must be 1 to 24 characters [json-pointer:/view/{key}/text]"]
    return []


def parse_view(ctx: ApiContext, args: Args, kind: str) -> JSON:
    """The `view` argument, checked as Slack checks it, with generated ids filled in."""
    return check_view(ctx.ids, arg_json(args, "view"), kind)


def check_view(ids: Ids, view: Any, kind: str) -> JSON:
    """The view as Slack stores it; WebApiError(invalid_arguments) where Slack would refuse it."""
    if not isinstance(view, dict):
        raise _invalid(["must be an object [json-pointer:/view]"])
    if view.get("type") != kind:
        raise _invalid([f"must be {kind} [json-pointer:/view/type]"])
    blocks = view.get("blocks")
    problems = [
        p.replace("[json-pointer:", "[json-pointer:/view")
        for p in validate_blocks(blocks, MAX_VIEW_BLOCKS)
    ]
    if kind == "modal":
        problems += _title_errors(view, "title", required=True)
        problems += _title_errors(view, "close", required=False)
        has_input = any(isinstance(b, dict) and b.get("type") == "input" for b in blocks or [])
        problems += _title_errors(view, "submit", required=has_input)
    if len(str(view.get("private_metadata", ""))) > 3000:
        problems.append("must be less than 3001 characters [json-pointer:/view/private_metadata]")
    if len(str(view.get("callback_id", ""))) > 255:
        problems.append("must be less than 256 characters [json-pointer:/view/callback_id]")
    if problems:
        raise _invalid(problems)
    return {**view, "blocks": with_generated_ids(list(blocks or []), ids)}


def _check_external_id(ctx: ApiContext, definition: JSON, keep: str | None = None) -> None:
    external_id = definition.get("external_id")
    if not external_id:
        return
    taken = ctx.ws.find_view(external_id=str(external_id))
    if taken is not None and taken.id != keep:
        raise WebApiError("duplicate_external_id")


def _new_view(ctx: ApiContext, user: str, definition: JSON, root: str | None = None) -> View:
    view_id = ctx.ids.object_id("V")
    view = View(view_id, user, definition, ctx.ids.view_hash(), root or view_id)
    ctx.ws.views[view_id] = view
    return view


def _reply(ctx: ApiContext, view: View) -> JSON:
    ws = ctx.ws
    ctx.ws.changed()
    return {"ok": True, "view": view.to_slack(ws.team_id, ws.app_id, ws.bot_id)}


def views_open(ctx: ApiContext, args: Args) -> JSON:
    definition = parse_view(ctx, args, "modal")
    user = ctx.triggers.exchange(arg_str(args, "trigger_id"))
    _check_external_id(ctx, definition)
    view = _new_view(ctx, user, definition)
    ctx.ws.modal_stacks[user] = [view.id]
    return _reply(ctx, view)


def views_push(ctx: ApiContext, args: Args) -> JSON:
    definition = parse_view(ctx, args, "modal")
    user = ctx.triggers.exchange(arg_str(args, "trigger_id"))
    stack = ctx.ws.modal_stacks.get(user) or []
    if not stack:
        raise WebApiError("not_found")
    if len(stack) >= MAX_STACK:
        raise WebApiError("push_limit_reached")
    _check_external_id(ctx, definition)
    view = _new_view(ctx, user, definition, root=stack[0])
    view.previous_view_id = stack[-1]
    stack.append(view.id)
    return _reply(ctx, view)


def replace_definition(ids: Ids, view: View, definition: JSON) -> None:
    """New blocks for an open view: input the user typed survives where the ids still match."""
    kept = {
        (str(b.get("block_id")), str((b.get("element") or {}).get("action_id")))
        for b in definition.get("blocks") or []
    }
    view.values = {
        block_id: {a: v for a, v in actions.items() if (block_id, a) in kept}
        for block_id, actions in view.values.items()
    }
    view.values = {b: a for b, a in view.values.items() if a}
    view.definition = definition
    view.hash = ids.view_hash()
    view.errors = {}
    view.notice = None


def views_update(ctx: ApiContext, args: Args) -> JSON:
    view_id, external_id = arg_str(args, "view_id"), arg_str(args, "external_id")
    if not view_id and not external_id:
        raise WebApiError("invalid_arguments")
    view = ctx.ws.find_view(view_id=view_id, external_id=external_id)
    if view is None:
        raise WebApiError("not_found")
    expected = arg_str(args, "hash")
    if expected and expected != view.hash:
        raise WebApiError("hash_conflict")
    definition = parse_view(ctx, args, view.type)
    _check_external_id(ctx, definition, keep=view.id)
    replace_definition(ctx.ids, view, definition)
    return _reply(ctx, view)


def views_publish(ctx: ApiContext, args: Args) -> JSON:
    user = ctx.ws.find_user(arg_str(args, "user_id"))
    if user is None:
        raise WebApiError("user_not_found")
    definition = parse_view(ctx, args, "home")
    view = ctx.ws.home_view(user.id)
    expected = arg_str(args, "hash")
    if view is not None and expected and expected != view.hash:
        raise WebApiError("hash_conflict")
    _check_external_id(ctx, definition, keep=view.id if view else None)
    if view is None:
        view = _new_view(ctx, user.id, definition)
        ctx.ws.home_views[user.id] = view.id
    else:
        replace_definition(ctx.ids, view, definition)
    return _reply(ctx, view)


METHODS: dict[str, Handler] = {
    "views.open": views_open,
    "views.push": views_push,
    "views.update": views_update,
    "views.publish": views_publish,
}
