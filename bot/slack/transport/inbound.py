"""What may come in from Slack: the signature, then the body's shape, before Bolt sees it.

Bolt parses a body before it checks its signature, and reads payloads as if
Slack could send nothing odd: `payload=[]`, `"event": null`, `"actions": []`,
a view without `type` or `state`, or JSON nested 100,000 deep each escaped it
as a 500 with a traceback. So, in this order and with no I/O:

1. `signature_problem`: the `v0` HMAC of the raw bytes, checked before
   anything is parsed. Any failure is the caller's 401.
2. `parse`: UTF-8, a depth limit before `json.loads`, then Bolt's own
   reading of the body (JSON, a form whose `payload` is JSON, or a plain form).
3. `check`: the fields that Bolt's context and our listeners read have the
   types Slack documents, and then Bolt's own context reader, the one it runs
   before any listener, reads the payload. Which bodies that reader trips on
   differs by version (1.20 indexes `user.team_id` where 1.30 asks), so the
   installed Bolt is asked rather than its rules copied. Socket Mode envelopes
   go through `check` alone.

Steps 2 and 3 raise `Malformed`, the caller's 400; a body that passes reaches
Bolt unchanged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context

from bot.core.args.plainjson import lone_surrogate, text_too_deep, too_deep
from bot.slack.blocks.escape import INPUT_MAX, PRIVATE_METADATA
from bot.slack.transport import messages as tmsg

MAX_AGE_S = 300  # Slack's replay window: older timestamps are refused
MAX_DEPTH = 64  # Slack's own payloads nest about 10 deep (a view's rich text blocks)

_TIMESTAMP = re.compile(r"[0-9]{1,12}")


class Malformed(ValueError):
    """A signed body that is not a payload we can read; the text says why."""


def signature_problem(
    secret: str, body: bytes, timestamp: str | None, signature: str | None, *, now: float
) -> str | None:
    """Why the request is not Slack's (a short reason for the log); None when it is."""
    if not timestamp or not signature:
        return "unsigned"
    if not _TIMESTAMP.fullmatch(timestamp):
        return "bad timestamp"
    if abs(now - int(timestamp)) > MAX_AGE_S:
        return "stale timestamp"
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        return "bad signature"
    return None


def parse(body: bytes, content_type: str | None) -> dict[str, Any]:
    """The payload Bolt will read from this body, checked; raises Malformed."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed(tmsg.SLACK_NOT_UTF8) from None
    if not text:
        return {}
    # Bolt's rule, kept exactly so that we check what it will read.
    kind = content_type.split(";")[0] if content_type else None
    if kind == "application/json" or text.startswith("{"):
        data = _json(text)
    elif "payload" in text:
        payload = dict(parse_qsl(text, keep_blank_values=True)).get("payload")
        data = {} if payload is None else _json(payload)
    else:
        data = dict(parse_qsl(text, keep_blank_values=True))
    return check(data)


def _json(text: str) -> Any:
    if text_too_deep(text, MAX_DEPTH):
        raise Malformed(tmsg.SLACK_TOO_DEEP.format(limit=MAX_DEPTH))
    try:
        return json.loads(text)
    except ValueError:
        raise Malformed(tmsg.SLACK_BAD_BODY) from None


# -- shapes ---------------------------------------------------------------------------

Check = Callable[[Any, str], None]


def _bad(where: str, what: str) -> Malformed:
    where = where if len(where) <= 120 else where[:119] + "…"  # keys are the sender's text
    return Malformed(tmsg.SLACK_BAD_PAYLOAD.format(problem=f"{where} {what}"))


def _of(*kinds: type | None) -> Check:
    allowed = tuple(type(None) if k is None else k for k in kinds)
    names = " or ".join("null" if k is None else _NAMES[k] for k in kinds)

    def check(value: Any, where: str) -> None:
        # bool is an int, and Slack never sends a number where we read text
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise _bad(where, f"must be {names}")

    return check


_NAMES: dict[type, str] = {
    str: "a string",
    dict: "an object",
    list: "a list",
    bool: "a boolean",
    int: "a number",
}
_STR, _OPT_STR, _OBJ = _of(str), _of(str, None), _of(dict)
_ID = _of(str, dict, None)  # "U123", {"id": "U123", ...} or null


def _fields(spec: Mapping[str, Check]) -> Check:
    """Each named field, when present, passes its check; other fields are Slack's business."""

    def check(value: Any, where: str) -> None:
        _OBJ(value, where)
        for name, field_check in spec.items():
            if name in value:
                field_check(value[name], f"{where}.{name}")

    return check


def _required(*names: str) -> Check:
    def check(value: Any, where: str) -> None:
        _OBJ(value, where)
        for name in names:
            if name not in value:
                raise _bad(f"{where}.{name}", "is missing")

    return check


def _both(*checks: Check) -> Check:
    def check(value: Any, where: str) -> None:
        for c in checks:
            c(value, where)

    return check


def _must(name: str, field_check: Check) -> Check:
    """`name` is present and passes `field_check` (on top of the type `_ANY` checked)."""
    return _both(_required(name), _fields({name: field_check}))


def _list_of(item: Check, *, min_items: int = 0) -> Check:
    def check(value: Any, where: str) -> None:
        _of(list)(value, where)
        if len(value) < min_items:
            raise _bad(where, f"needs at least {min_items} item(s)")
        for i, x in enumerate(value):
            item(x, f"{where}[{i}]")

    return check


def _dict_of(item: Check) -> Check:
    def check(value: Any, where: str) -> None:
        _OBJ(value, where)
        for key, x in value.items():
            item(x, f"{where}.{key}")

    return check


def _nullable(inner: Check) -> Check:
    def check(value: Any, where: str) -> None:
        if value is not None:
            inner(value, where)

    return check


def _short(limit: int) -> Check:
    def check(value: Any, where: str) -> None:
        _OPT_STR(value, where)
        if value is not None and len(value) > limit:
            raise _bad(where, f"is longer than {limit} characters")

    return check


def _ref(value: Any, where: str) -> None:
    """A user, team, channel or enterprise: an id string, or an object whose `id` is one."""
    _ID(value, where)
    if isinstance(value, dict):
        _fields({"id": _STR, "team_id": _OPT_STR, "enterprise_id": _OPT_STR})(value, where)


_MESSAGE = _fields(
    {
        "type": _OPT_STR,
        "subtype": _OPT_STR,
        "user": _ref,
        "bot_id": _OPT_STR,
        "text": _OPT_STR,
        "ts": _OPT_STR,
        "thread_ts": _OPT_STR,
        "channel": _ref,
    }
)
_EVENT = _both(
    _fields(
        {
            "type": _STR,
            "subtype": _OPT_STR,
            "user": _ref,
            "user_id": _OPT_STR,
            "user_team": _OPT_STR,
            "team": _OPT_STR,
            "bot_id": _OPT_STR,
            "channel": _ref,
            "channel_type": _OPT_STR,
            "text": _OPT_STR,
            "ts": _OPT_STR,
            "thread_ts": _OPT_STR,
            "tab": _OPT_STR,
            "message": _nullable(_MESSAGE),
            "previous_message": _nullable(_MESSAGE),
            "function_execution_id": _OPT_STR,
            "bot_access_token": _OPT_STR,
            "inputs": _nullable(_OBJ),
            "workflow_step": _OBJ,
            "assistant_thread": _nullable(_OBJ),
        }
    ),
    _required("type"),
)
# An option a person picked: Slack always sends its `value` as a string.
_OPTION = _must("value", _STR)
_CHOSEN: dict[str, Check] = {
    "type": _OPT_STR,
    "value": _short(INPUT_MAX),
    "selected_option": _nullable(_OPTION),
    "selected_options": _nullable(_list_of(_OPTION)),
    **dict.fromkeys(("selected_user", "selected_channel", "selected_conversation"), _OPT_STR),
    **dict.fromkeys(("selected_date", "selected_time"), _OPT_STR),
    **dict.fromkeys(
        ("selected_users", "selected_channels", "selected_conversations"),
        _nullable(_list_of(_STR)),
    ),
    "selected_date_time": _of(int, None),
}
_INPUT = _fields(_CHOSEN)
_STATE = _must("values", _dict_of(_dict_of(_INPUT)))
_VIEW = _both(
    _fields(
        {
            "id": _STR,
            "type": _STR,
            "callback_id": _STR,
            "private_metadata": _short(PRIVATE_METADATA),
            "state": _STATE,
            "team_id": _OPT_STR,
            "app_installed_team_id": _OPT_STR,
        }
    ),
    _required("type", "callback_id"),
)
_ACTION = _fields({**_CHOSEN, "action_id": _STR, "block_id": _OPT_STR, "value": _OPT_STR})
_AUTHORIZATION = _fields(
    {"team_id": _OPT_STR, "enterprise_id": _OPT_STR, "is_enterprise_install": _of(bool, None)}
)

# Every payload: the fields Bolt's context and matchers read before any listener runs.
_ANY = _fields(
    {
        "type": _STR,
        "token": _OPT_STR,
        "team": _ref,
        "enterprise": _ref,
        "user": _ref,
        "channel": _ref,
        "team_id": _OPT_STR,
        "enterprise_id": _OPT_STR,
        "context_team_id": _OPT_STR,
        "context_enterprise_id": _OPT_STR,
        "user_id": _STR,
        "channel_id": _STR,
        "is_enterprise_install": _of(bool, str, None),
        "is_ext_shared_channel": _of(bool, None),
        "authorizations": _nullable(_list_of(_AUTHORIZATION)),
        "event": _EVENT,
        "event_id": _STR,
        "actions": _list_of(_ACTION, min_items=1),
        "view": _nullable(_VIEW),
        "container": _nullable(_fields({"channel_id": _OPT_STR, "message_ts": _OPT_STR})),
        "message": _nullable(_MESSAGE),
        "previous_message": _nullable(_MESSAGE),
        "thread_ts": _OPT_STR,
        "trigger_id": _STR,
        "callback_id": _STR,
        "action_id": _STR,
        "command": _STR,
        "text": _STR,
        "response_url": _STR,
        "response_urls": _list_of(_fields({"response_url": _STR})),
        "challenge": _STR,
        "function_execution_id": _OPT_STR,
        "bot_access_token": _OPT_STR,
        "function_data": _fields({"execution_id": _OPT_STR, "inputs": _nullable(_OBJ)}),
        "workflow_step": _OBJ,
        "item": _OBJ,
        "assistant_thread": _OBJ,
    }
)


def _team(value: Any, where: str) -> None:
    """Bolt finds the workspace in `team`, else `user.team_id` or `view.team_id` (an
    org-wide install sends team null); with none of them, older Bolt raises KeyError."""
    if value.get("team"):
        return
    for holder in ("user", "view"):
        if isinstance(value.get(holder), dict) and value[holder].get("team_id"):
            return
    raise _bad(f"{where}.team", "is missing, and so are user.team_id and view.team_id")


_PERSON = _both(_must("user", _both(_OBJ, _required("id"))), _team)
_MESSAGE_EVENT = _both(_required("channel", "ts"), _fields({"channel": _STR, "text": _STR}))
_EVENTS: dict[str, Check] = {"message": _MESSAGE_EVENT, "app_mention": _MESSAGE_EVENT}


def _event(value: Any, where: str) -> None:
    _required("event")(value, where)
    event = value["event"]
    if event["type"] in _EVENTS:
        _EVENTS[event["type"]](event, f"{where}.event")


# What each kind of payload must carry besides the fields above.
_BY_TYPE: dict[str, Check] = {
    "block_actions": _both(
        _PERSON,
        _required("trigger_id"),
        _must("actions", _list_of(_required("action_id"))),
        # listeners read `channel.id` and `container.channel_id`: objects or absent
        _fields({"channel": _nullable(_OBJ), "container": _OBJ}),
    ),
    "interactive_message": _both(_PERSON, _required("actions", "callback_id")),
    "view_submission": _both(
        _PERSON, _must("view", _both(_OBJ, _required("state", "private_metadata")))
    ),
    "view_closed": _both(_PERSON, _must("view", _OBJ)),
    "event_callback": _event,
    "url_verification": _required("challenge"),
    "shortcut": _both(_PERSON, _required("callback_id")),
    "message_action": _both(_PERSON, _required("callback_id")),
    "block_suggestion": _both(_PERSON, _required("action_id")),
}


def check(data: Any) -> dict[str, Any]:
    """`data` if it is a payload Bolt and our listeners can read safely; raises Malformed."""
    if not isinstance(data, dict):
        raise _bad("the body", "must be a JSON object")
    if too_deep(data, MAX_DEPTH):
        raise Malformed(tmsg.SLACK_TOO_DEEP.format(limit=MAX_DEPTH))
    if lone_surrogate(data):
        raise _bad("a string", "holds a lone surrogate")
    _ANY(data, "payload")
    kind = data.get("type")
    if kind in _BY_TYPE:
        _BY_TYPE[kind](data, "payload")
    elif kind is None and "command" in data:
        _required("command", "user_id", "channel_id")(data, "payload")
    _bolt_reads(data)
    return data


def _bolt_reads(data: dict[str, Any]) -> None:
    """Bolt's context reader (pure: no I/O) gets through `data`, or it is Malformed."""
    try:
        build_async_context(AsyncBoltContext({}), data)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise _bad("payload", tmsg.SLACK_BOLT_UNREADABLE.format(kind=type(exc).__name__)) from None
