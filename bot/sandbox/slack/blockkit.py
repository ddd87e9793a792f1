"""Block Kit as Slack's servers and clients treat it: limits, generated ids, elements, state.

`validate_blocks` enforces the limits Slack enforces and slack_sdk does not (50 blocks in a
message, 100 in a view, 3,000 characters of section text, ...), so a bot that breaks them
fails here as it would against Slack, with `invalid_blocks`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.sandbox.slack.ids import Ids

JSON = dict[str, Any]

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
BLOCK_TYPES = {
    "actions",
    "context",
    "context_actions",
    "divider",
    "file",
    "header",
    "image",
    "input",
    "markdown",
    "rich_text",
    "section",
    "video",
}
# element type -> (field in state/action payloads, field holding the initial value)
_SCALAR_STATE = {
    "plain_text_input": ("value", "initial_value"),
    "number_input": ("value", "initial_value"),
    "email_text_input": ("value", "initial_value"),
    "url_text_input": ("value", "initial_value"),
    "users_select": ("selected_user", "initial_user"),
    "conversations_select": ("selected_conversation", "initial_conversation"),
    "channels_select": ("selected_channel", "initial_channel"),
    "datepicker": ("selected_date", "initial_date"),
    "timepicker": ("selected_time", "initial_time"),
    "multi_users_select": ("selected_users", "initial_users"),
    "multi_conversations_select": ("selected_conversations", "initial_conversations"),
    "multi_channels_select": ("selected_channels", "initial_channels"),
}
_ONE_OPTION = {"static_select", "external_select", "radio_buttons", "overflow"}
_MANY_OPTIONS = {"checkboxes", "multi_static_select", "multi_external_select"}
NOT_STATEFUL = {"button", "overflow", "image", "workflow_button"}


# --- validation -------------------------------------------------------------------------


def _text_errors(obj: Any, pointer: str, limit: int, plain_only: bool = False) -> list[str]:
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return [f"must be a text object [json-pointer:{pointer}]"]
    kinds = ("plain_text",) if plain_only else ("plain_text", "mrkdwn")
    if obj.get("type") not in kinds:
        return [f"must be one of {', '.join(kinds)} [json-pointer:{pointer}/type]"]
    if not obj["text"]:
        return [f"must be more than 0 characters [json-pointer:{pointer}/text]"]
    if len(obj["text"]) > limit:
        return [f"must be less than {limit + 1} characters [json-pointer:{pointer}/text]"]
    return []


def _element_errors(element: Any, pointer: str) -> list[str]:
    if not isinstance(element, dict) or not isinstance(element.get("type"), str):
        return [f"missing required field: type [json-pointer:{pointer}]"]
    errors: list[str] = []
    if len(str(element.get("action_id", ""))) > 255:
        errors.append(f"must be less than 256 characters [json-pointer:{pointer}/action_id]")
    if element["type"] == "button":
        errors += _text_errors(element.get("text"), f"{pointer}/text", 75, plain_only=True)
        if len(str(element.get("value", ""))) > 2000:
            errors.append(f"must be less than 2001 characters [json-pointer:{pointer}/value]")
    return errors


def _section_errors(block: JSON, pointer: str) -> list[str]:
    errors: list[str] = []
    if "text" not in block and "fields" not in block:
        errors.append(f"must provide text or fields [json-pointer:{pointer}]")
    if "text" in block:
        errors += _text_errors(block["text"], f"{pointer}/text", 3000)
    fields = block.get("fields") or []
    if len(fields) > 10:
        errors.append(f"must be less than 11 items [json-pointer:{pointer}/fields]")
    for i, item in enumerate(fields):
        errors += _text_errors(item, f"{pointer}/fields/{i}", 2000)
    if "accessory" in block:
        errors += _element_errors(block["accessory"], f"{pointer}/accessory")
    return errors


def _block_errors(block: JSON, pointer: str) -> list[str]:
    kind = block["type"]
    errors: list[str] = []
    if kind == "section":
        errors += _section_errors(block, pointer)
    elif kind == "header":
        errors += _text_errors(block.get("text"), f"{pointer}/text", 150, plain_only=True)
    elif kind in ("actions", "context"):
        elements = block.get("elements")
        limit = 25 if kind == "actions" else 10
        if not isinstance(elements, list) or not elements or len(elements) > limit:
            errors.append(f"must have 1 to {limit} items [json-pointer:{pointer}/elements]")
        elif kind == "actions":
            for i, element in enumerate(elements):
                errors += _element_errors(element, f"{pointer}/elements/{i}")
    elif kind == "input":
        errors += _text_errors(block.get("label"), f"{pointer}/label", 2000, plain_only=True)
        errors += _element_errors(block.get("element"), f"{pointer}/element")
    return errors


def validate_blocks(blocks: Any, limit: int = MAX_MESSAGE_BLOCKS) -> list[str]:
    """Slack-style error strings; empty when the blocks would be accepted."""
    if not isinstance(blocks, list):
        return ["must be an array [json-pointer:/blocks]"]
    if len(blocks) > limit:
        return [f"must be less than {limit + 1} items [json-pointer:/blocks]"]
    errors: list[str] = []
    seen: set[str] = set()
    for i, block in enumerate(blocks):
        pointer = f"/blocks/{i}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            errors.append(f"missing required field: type [json-pointer:{pointer}]")
            continue
        if block["type"] not in BLOCK_TYPES:
            errors.append(f"unsupported type: {block['type']} [json-pointer:{pointer}/type]")
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            if len(str(block_id)) > 255:
                errors.append(f"must be less than 256 characters [json-pointer:{pointer}/block_id]")
            if block_id in seen:
                errors.append(f"duplicate block_id [json-pointer:{pointer}/block_id]")
            seen.add(str(block_id))
        errors += _block_errors(block, pointer)
    return errors


# --- ids and element lookup -------------------------------------------------------------


def _elements_of(block: JSON) -> list[JSON]:
    found: list[Any] = []
    if block.get("type") == "actions":
        found = list(block.get("elements") or [])
    elif block.get("type") == "section" and "accessory" in block:
        found = [block["accessory"]]
    elif block.get("type") == "input" and "element" in block:
        found = [block["element"]]
    return [e for e in found if isinstance(e, dict)]


def with_generated_ids(blocks: list[JSON], ids: Ids) -> list[JSON]:
    """A copy with every block_id and interactive action_id filled in, as Slack stores them."""
    out = copy.deepcopy(blocks)
    for block in out:
        block.setdefault("block_id", ids.short())
        for element in _elements_of(block):
            if element.get("type") != "image":
                element.setdefault("action_id", ids.short())
    return out


@dataclass
class Located:
    block: JSON
    element: JSON

    @property
    def block_id(self) -> str:
        return str(self.block.get("block_id", ""))

    @property
    def action_id(self) -> str:
        return str(self.element.get("action_id", ""))

    @property
    def in_input(self) -> bool:
        return self.block.get("type") == "input"


def iter_elements(blocks: list[JSON]) -> Iterator[Located]:
    for block in blocks:
        for element in _elements_of(block):
            yield Located(block, element)


def find_element(blocks: list[JSON], action_id: str, value: str | None = None) -> Located | None:
    """The element with this action_id (and button value, when several share the id)."""
    matches = [loc for loc in iter_elements(blocks) if loc.action_id == action_id]
    if value is not None:
        matches = [m for m in matches if m.element.get("value", value) == value] or matches
    return matches[0] if matches else None


def _options(element: JSON) -> list[JSON]:
    options = [o for o in element.get("options") or [] if isinstance(o, dict)]
    for group in element.get("option_groups") or []:
        options += [o for o in group.get("options") or [] if isinstance(o, dict)]
    return options


def find_option(element: JSON, wanted: Any) -> JSON | None:
    """An option by value, or else by its visible text."""
    if isinstance(wanted, dict):
        wanted = wanted.get("value")
    options = _options(element)
    by_value = next((o for o in options if o.get("value") == wanted), None)
    return by_value or next(
        (o for o in options if (o.get("text") or {}).get("text") == wanted), None
    )


# --- state values -----------------------------------------------------------------------


def _options_for(element: JSON, wanted: list[Any]) -> list[JSON]:
    found = [find_option(element, w) for w in wanted]
    missing = [w for w, o in zip(wanted, found, strict=True) if o is None]
    if missing:
        raise ValueError(f"no option {missing[0]!r} in {element.get('action_id')}")
    return [o for o in found if o is not None]


def state_entry(element: JSON, supplied: Any = None) -> JSON:
    """The typed `state.values` entry for an element, from a supplied value or its initial one."""
    kind = str(element.get("type"))
    entry: JSON = {"type": kind}
    if kind in _ONE_OPTION:
        if supplied is None:
            entry["selected_option"] = element.get("initial_option")
        else:
            entry["selected_option"] = _options_for(element, [supplied])[0]
    elif kind in _MANY_OPTIONS:
        if supplied is None:
            entry["selected_options"] = element.get("initial_options") or []
        else:
            wanted = supplied if isinstance(supplied, list) else [supplied]
            entry["selected_options"] = _options_for(element, wanted)
    elif kind in _SCALAR_STATE:
        key, initial = _SCALAR_STATE[kind]
        entry[key] = element.get(initial) if supplied is None else supplied
    else:
        entry["value"] = supplied
    return entry


def is_empty(entry: JSON) -> bool:
    return all(v in (None, "", []) for k, v in entry.items() if k != "type")


def action_entry(located: Located, state: JSON | None, action_ts: str) -> JSON:
    """One item of a block_actions payload's `actions` list."""
    element = located.element
    action: JSON = {
        "type": element.get("type"),
        "action_id": located.action_id,
        "block_id": located.block_id,
        "action_ts": action_ts,
    }
    for key in ("text", "value", "style", "url", "placeholder"):
        if key in element:
            action[key] = element[key]
    if state is not None:
        action.update({k: v for k, v in state.items() if k != "type"})
    return action
