"""The checks before Bolt: signature first, then the body Bolt will read, then its shape."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.internals import parse_body

from bot.slack.transport import inbound

SECRET = "s3cret"
NOW = 1_700_000_000


def _sig(body: bytes, ts: str, secret: str = SECRET) -> str:
    base = b"v0:" + ts.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("ts", "sig", "why"),
    [
        (None, "v0=x", "unsigned"),
        (str(NOW), None, "unsigned"),
        ("soon", "v0=x", "bad timestamp"),
        ("\u0661" * 10, "v0=x", "bad timestamp"),  # digits, but not ASCII ones
        (str(NOW - 301), "v0=x", "stale timestamp"),
        (str(NOW), "v0=" + "0" * 64, "bad signature"),
        (str(NOW), "v0=\u00e9", "bad signature"),
    ],
)
def test_signature_problems(ts: str | None, sig: str | None, why: str) -> None:
    assert inbound.signature_problem(SECRET, b"{}", ts, sig, now=NOW) == why


def test_a_good_signature_over_bytes_that_are_not_utf8() -> None:
    body = b"payload=\xff"
    assert inbound.signature_problem(SECRET, body, str(NOW), _sig(body, str(NOW)), now=NOW) is None
    with pytest.raises(inbound.Malformed, match="UTF-8"):
        inbound.parse(body, None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@st.composite
def http_bodies(draw: st.DrawFn) -> tuple[str, str | None]:
    value = draw(json_values)
    kind = draw(st.sampled_from(["json", "form", "text"]))
    if kind == "json":
        return json.dumps(value), draw(st.sampled_from(["application/json", None]))
    if kind == "form":
        return urlencode({"payload": json.dumps(value)}), None
    return draw(st.text(max_size=30)), draw(st.sampled_from(["application/json; x=1", None]))


@given(http_bodies())
def test_parse_reads_a_body_as_bolt_does(body: tuple[str, str | None]) -> None:
    """Whatever we accept, Bolt reads to the very same payload: we check what it acts on."""
    text, content_type = body
    try:
        ours = inbound.parse(text.encode("utf-8", "surrogatepass"), content_type)
    except inbound.Malformed:
        return
    assert ours == parse_body(text, content_type.split(";")[0] if content_type else None)


def _view(**view: Any) -> dict[str, Any]:
    return {"type": "view_submission", "user": {"id": "U1", "team_id": "T1"}, "view": view}


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ([1], "must be a JSON object"),
        ({"type": "event_callback", "event": None}, "payload.event must be an object"),
        ({"type": "event_callback", "event": {}}, "payload.event.type is missing"),
        ({"type": "event_callback", "event": {"type": "message"}}, "channel is missing"),
        ({"type": "block_actions", "user": {"id": "U"}, "actions": []}, "at least 1"),
        ({"type": "block_actions", "user": "U", "trigger_id": "t", "actions": [{}]}, "object"),
        ({"type": "block_actions", "team": 5}, "payload.team must be"),
        (_view(type="modal", callback_id="c", private_metadata=""), "view.state is missing"),
        (_view(type="modal", callback_id="c", state={"values": {}}), "private_metadata is"),
        (_view(callback_id="c", private_metadata="", state={"values": {}}), "view.type"),
        (
            _view(
                type="modal",
                callback_id="c",
                private_metadata="",
                state={"values": {"b": {"a": {"value": "x" * 3001}}}},
            ),
            "longer than 3000",
        ),
        ({"command": "/hitl", "user_id": "U"}, "channel_id is missing"),
        ({"type": "url_verification", "challenge": None}, "challenge must be a string"),
        ({"authorizations": [None]}, "authorizations[0] must be an object"),
        ({"text": "\ud800"}, "lone surrogate"),
    ],
)
def test_shapes_bolt_or_a_listener_would_trip_on_are_malformed(payload: Any, problem: str) -> None:
    with pytest.raises(inbound.Malformed, match=problem.replace("[", r"\[").replace("]", r"\]")):
        inbound.check(payload)


def test_slack_shaped_payloads_pass() -> None:
    ok = [
        {},  # Bolt answers an empty body itself (404)
        {"ssl_check": "1", "token": "x"},
        {"command": "/hitl", "user_id": "U", "channel_id": "C", "text": ""},
        {"type": "url_verification", "challenge": "abc"},
        {
            "type": "event_callback",
            "event_id": "Ev1",
            "team_id": "T1",
            "authorizations": [{"team_id": "T1", "enterprise_id": None}],
            "event": {"type": "message", "channel": "C1", "ts": "1.2", "text": "hi"},
        },
        {
            "type": "event_callback",
            "team_id": "T1",
            "event": {"type": "team_join", "user": {"id": "U9"}},
        },
        {
            "type": "block_actions",
            "user": {"id": "U1", "team_id": "T1"},
            "team": {"id": "T1"},
            "trigger_id": "1.2",
            "channel": {"id": "C1"},
            "container": {"type": "message", "channel_id": "C1"},
            "actions": [{"action_id": "a", "block_id": "b", "value": "v", "type": "button"}],
        },
        _view(
            id="V1",
            type="modal",
            callback_id="c",
            private_metadata="",
            state={"values": {"b": {"a": {"value": None, "selected_option": None}}}},
        ),
    ]
    for payload in ok:
        assert inbound.check(payload) is payload


# Bodies with no workspace that Bolt 1.20's context reader indexes into (KeyError,
# TypeError) and 1.30's reads; both ends of the range run this file.
NO_WORKSPACE = [
    {"type": "app_rate_limited", "user": {"id": "U1"}},
    {"type": "x", "user": "U1"},
    {"type": "x", "event": {"type": "y", "user": "U1"}},
    {"type": "x", "view": {"type": "modal", "callback_id": "c"}},
]


def _bolt_reads(payload: dict[str, Any]) -> bool:
    try:
        build_async_context(AsyncBoltContext({}), payload)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("payload", NO_WORKSPACE)
def test_what_check_passes_the_installed_bolt_can_read(payload: dict[str, Any]) -> None:
    """A body check() lets through never raises in Bolt before a listener (a 500 once)."""
    if _bolt_reads(payload):
        assert inbound.check(payload) is payload
    else:
        with pytest.raises(inbound.Malformed, match="Bolt's reader raised"):
            inbound.check(payload)
