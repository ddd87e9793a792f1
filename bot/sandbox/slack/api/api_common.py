"""What every Web API method handler gets: the workspace and helpers to read arguments.

Arguments arrive as strings (form or query) or as JSON values (JSON bodies); the helpers
accept both, as Slack does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.sandbox.slack.blockkit import MAX_MESSAGE_BLOCKS, validate_blocks, with_generated_ids
from bot.sandbox.slack.errors import WebApiError
from bot.sandbox.slack.ids import Ids
from bot.sandbox.slack.triggers import Triggers
from bot.sandbox.slack.workspace import JSON, Message, Workspace

Args = dict[str, Any]


@dataclass
class ApiContext:
    ws: Workspace
    ids: Ids
    triggers: Triggers
    base_url: Callable[[], str]
    # called after the bot posts (edited=False) or edits (edited=True) a message
    on_bot_message: Callable[[Message, bool], None] | None = None


Handler = Callable[[ApiContext, Args], JSON]


def arg_str(args: Args, name: str, default: str = "") -> str:
    value = args.get(name)
    if value is None:
        return default
    return value if isinstance(value, str) else str(value)


def arg_bool(args: Args, name: str) -> bool:
    value = args.get(name)
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)


def arg_int(args: Args, name: str, default: int) -> int:
    try:
        return int(args.get(name) or default)
    except (TypeError, ValueError) as e:
        raise WebApiError("invalid_arguments") from e


def arg_json(args: Args, name: str, error: str = "invalid_arguments") -> Any:
    """A JSON-valued argument, given either as a JSON string (forms) or inline (JSON bodies)."""
    value = args.get(name)
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            return json.loads(value)
        except ValueError as e:
            raise WebApiError(error) from e
    return value


def arg_blocks(ctx: ApiContext, args: Args) -> list[JSON] | None:
    """`blocks`, checked against Slack's limits and with generated ids filled in."""
    blocks = arg_json(args, "blocks", error="invalid_blocks_format")
    if blocks is None:
        return None
    problems = validate_blocks(blocks, MAX_MESSAGE_BLOCKS)
    if problems:
        raise WebApiError(
            "invalid_blocks",
            errors=problems,
            response_metadata={"messages": [f"[ERROR] {p}" for p in problems]},
        )
    return with_generated_ids(blocks, ctx.ids)
