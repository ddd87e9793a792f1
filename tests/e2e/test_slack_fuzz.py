"""Hypothesis against POST /slack/events on the real bot: no body, signed or not, gets a 5xx.

Bodies are drawn near the payloads Slack sends (the fields Bolt and our listeners
read, holding any JSON), as JSON or as a `payload=` form, plus raw bytes. Unsigned
ones must all get 401; signed ones anything but a 5xx, and a 4xx always as JSON.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

import httpx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.slack.blocks import render
from tests.e2e.conftest import Bot
from tests.e2e.test_slack_bad_input import sign

KEYS = [
    "type", "user", "team", "enterprise", "channel", "container", "view", "actions", "event",
    "event_id", "trigger_id", "authorizations", "message", "response_urls", "callback_id",
    "command", "user_id", "channel_id", "text", "challenge", "is_ext_shared_channel",
    "function_data", "action_id", "thread_ts", "token",
]  # fmt: skip
TYPES = [
    "block_actions", "view_submission", "view_closed", "event_callback", "url_verification",
    "shortcut", "message_action", "block_suggestion", "interactive_message", "app_rate_limited",
]  # fmt: skip
NAMES = [
    "id", "type", "callback_id", "private_metadata", "state", "values", "value", "action_id",
    "channel", "ts", "thread_ts", "user", "text", "subtype", "bot_id", "team", "selected_option",
    render.ACTION_APPROVE, render.ACTION_EDIT, render.VIEW_REJECT, render.VIEW_EDIT,
    "message", "app_mention", "app_home_opened", render.REASON_BLOCK, render.ARGS_BLOCK,
]  # fmt: skip

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.sampled_from(NAMES)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
payloads = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES) | scalars},
    optional={k: json_values for k in KEYS if k != "type"},
)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["json", "form", "raw"]))
    if kind == "raw":
        return draw(st.binary(max_size=200)), draw(st.sampled_from(["application/json", ""]))
    value = draw(payloads | json_values)
    text = json.dumps(value)
    if kind == "json":
        return text.encode(), "application/json"
    return urlencode({"payload": text}).encode(), "application/x-www-form-urlencoded"


FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


async def _post(bot: Bot, body: bytes, content_type: str, headers: dict[str, str]) -> Any:
    async with httpx.AsyncClient() as http:
        return await http.post(
            bot.url + "/slack/events",
            content=body,
            headers={"Content-Type": content_type} | headers,
        )


@FUZZ
@given(body=bodies(), signed=st.booleans())
# Found on CI with Bolt 1.20, whose context reader indexes `user["team_id"]`: a 500.
@example(
    body=(b'{"type": "app_rate_limited", "user": {"id": "U1"}}', "application/json"), signed=True
)
@example(body=(urlencode({"payload": '{"type": "x", "user": "U1"}'}).encode(), ""), signed=True)
async def test_slack_events_never_answer_5xx(
    bot: Bot, body: tuple[bytes, str], signed: bool
) -> None:
    raw, content_type = body
    ts = str(int(time.time()))
    headers = sign(raw, ts) if signed else sign(raw, ts, secret="wrong")
    resp = await _post(bot, raw, content_type, headers)
    assert resp.status_code < 500, (resp.status_code, resp.text)
    if not signed:
        assert resp.status_code == 401 and resp.json()["error"] == "unauthorized"
    elif resp.status_code == 400:
        assert resp.json()["error"] == "bad_request"
