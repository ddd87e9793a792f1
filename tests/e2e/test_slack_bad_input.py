"""Every malformed request to POST /slack/events gets a 4xx JSON error and changes nothing.

One table: what was sent, whether it was signed, the answer wanted. Each row
runs against the real bot (run_serve) on a live request, and checks the
answer, that the request, its audit and Slack (the emulator) are untouched,
and that nothing was logged with a traceback; strangers get one short line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlencode

import httpx
import pytest
from slack_bolt.async_app import AsyncApp

from bot.core.states import State
from bot.errors import NotFound
from bot.slack.blocks import render
from bot.slack.blocks.escape import ButtonValue
from bot.store import audit
from tests.e2e.conftest import SECRET, Bot, sealed
from tests.support.poll import eventually

DEEP = "[" * 100_000 + "]" * 100_000
JSON_TYPE = "application/json"
FORM_TYPE = "application/x-www-form-urlencoded"
REAL = "REALVALUE"  # stands for the live request's button value, filled in per test


def sign(body: bytes, ts: str, secret: str = SECRET) -> dict[str, str]:
    base = b"v0:" + ts.encode() + b":" + body
    sig = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={sig}"}


# The emulator's workspace: a person of another team would be a Slack Connect guest.
TEAM = "TEMULATOR"


def form(payload: Any) -> str:
    return urlencode({"payload": json.dumps(payload)})


def click(actions: list[Any]) -> str:
    return form(
        {
            "type": "block_actions",
            "user": {"id": "UALICE", "team_id": TEAM},
            "trigger_id": "1.2.3",
            "channel": {"id": "CHITLAPPROVALS"},
            "container": {"type": "message"},
            "actions": actions,
        }
    )


def reject_view(*, metadata: str | None = REAL, reason: str | None = "too much") -> dict[str, Any]:
    view: dict[str, Any] = {"id": "V1", "type": "modal", "callback_id": render.VIEW_REJECT}
    if metadata is not None:
        view["private_metadata"] = metadata
    if reason is not None:
        view["state"] = {
            "values": {
                render.REASON_BLOCK: {
                    render.REASON_ACTION: {"selected_option": {"value": "other"}}
                },
                render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: {"value": reason}},
            }
        }
    return view


def submit(view: dict[str, Any]) -> str:
    return form(
        {"type": "view_submission", "user": {"id": "UALICE", "team_id": TEAM}, "view": view}
    )


@dataclass(frozen=True)
class Case:
    name: str
    body: str | bytes
    signed: bool = True
    content_type: str = FORM_TYPE
    timestamp: str | None = None  # None: now
    status: int = 400

    @property
    def error(self) -> str:
        return {400: "bad_request", 401: "unauthorized"}[self.status]


CASES = [
    # strangers: 401 before anything is parsed, however odd the body
    Case("timestamp 'soon'", "{}", signed=False, timestamp="soon", status=401),
    *(
        Case(f"unsigned {name}", body, signed=False, content_type=JSON_TYPE, status=401)
        for name, body in [("[1]", "[1]"), ("null", "null"), ("1", "1"), ("100k deep", DEEP)]
    ),
    Case("unsigned, not UTF-8", b"payload=\xff\xfe", signed=False, status=401),
    Case("forged payload=null", "payload=null", signed=False, status=401),
    # signed, but not a payload we can read: 400
    *(
        Case(f"signed {name}", body, content_type=JSON_TYPE)
        for name, body in [("[1]", "[1]"), ("null", "null"), ("1", "1"), ("100k deep", DEEP)]
    ),
    Case("payload= an array", "payload=[1]"),
    Case("payload= a string", 'payload="x"'),
    Case("payload= null", "payload=null"),
    Case("not UTF-8", b"payload=\xff\xfe"),
    Case("actions: []", click([])),
    Case("an action without action_id", click([{"value": REAL}])),
    Case(
        "event: null", json.dumps({"type": "event_callback", "event": None}), content_type=JSON_TYPE
    ),
    Case("view_submission without state", submit(reject_view(reason=None))),
    Case("view_submission without private_metadata", submit(reject_view(metadata=None))),
    Case("a reject reason over 3,000 characters", submit(reject_view(reason="x" * 3001))),
    Case(
        "no team anywhere (older Bolt raised KeyError)",
        form({"type": "view_submission", "user": {"id": "UALICE"}, "view": reject_view()}),
    ),
    Case("a lone surrogate", submit(reject_view(reason="\ud800"))),
]


def _fill(body: str | bytes, value: str) -> bytes:
    raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return raw.replace(REAL.encode(), value.encode())


async def _slack_state(bot: Bot, rid: str) -> tuple[Any, ...]:
    req = await bot.requests.get(rid)
    trail = await audit.entries(bot.redis, rid)
    return req.state, req.version, len(trail), bot.emu.workspace.version


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
async def test_bad_slack_input_gets_a_4xx_json_error_and_changes_nothing(
    bot: Bot, case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    rid = await bot.propose("refund", {"amount": 5})
    await bot.message_of(rid)
    value = ButtonValue.encode(rid, (await bot.requests.get(rid)).payload_hash)
    before = await _slack_state(bot, rid)
    body = _fill(case.body, value)
    ts = case.timestamp or str(int(time.time()))
    headers = {"Content-Type": case.content_type}
    headers |= sign(body, ts) if case.signed else sign(body, ts, secret="not-the-secret")
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    async with httpx.AsyncClient() as http:
        resp = await http.post(bot.url + "/slack/events", content=body, headers=headers)
    assert resp.status_code == case.status, resp.text
    assert resp.headers["content-type"] == JSON_TYPE
    assert resp.json()["error"] == case.error and resp.json()["detail"]
    assert await _slack_state(bot, rid) == before
    # uvicorn's access line is off at INFO (bot.logs.setup); everything else counts, but
    # the bot's own outbound Web API calls (slack_sdk.web): the notifier may still be
    # finishing the card's follow-ups (its permalink for a batch digest) meanwhile.
    ours = [
        r
        for r in caplog.records
        if r.name.startswith(("bot", "slack", "uvicorn"))
        and r.name != "uvicorn.access"
        and not r.name.startswith("slack_sdk.web")
    ]
    assert not [r for r in ours if r.exc_info or r.levelno >= logging.ERROR]
    if not case.signed:  # one short line, and not a byte of the body
        assert len(ours) == 1 and ours[0].levelno == logging.WARNING
        line = ours[0].getMessage() + json.dumps(
            {k: v for k, v in vars(ours[0]).items() if k in ("reason", "client", "path")}
        )
        assert len(line) < 200
        assert len(body) < 8 or body[:8].decode(errors="replace") not in line


async def test_the_same_submission_well_formed_is_accepted(bot: Bot) -> None:
    """The rows above are refused for their defect alone: fixed, the same reject works."""
    rid = await bot.propose("refund", {"amount": 5})
    await bot.message_of(rid)
    value = ButtonValue.encode(rid, (await bot.requests.get(rid)).payload_hash)
    body = submit(sealed(reject_view(metadata=value, reason="x" * 3000))).encode()
    headers = {"Content-Type": FORM_TYPE} | sign(body, str(int(time.time())))
    async with httpx.AsyncClient() as http:
        resp = await http.post(bot.url + "/slack/events", content=body, headers=headers)
    assert resp.status_code == 200, resp.text
    trail = await audit.entries(bot.redis, rid)
    assert [(e.event, e.actor, len(e.text or "")) for e in trail if e.event == "reject"] == [
        ("reject", "UALICE", 3000)
    ]
    assert (await bot.requests.get(rid)).state == State.CANCELLED  # rejected, then closed


async def test_an_edit_of_a_request_that_does_not_exist_is_refused_in_the_modal(
    bot: Bot,
) -> None:
    """Well formed, so Slack's own answer for a refused submission: 200 with the error
    under the field (a 4xx would show the person only "trouble connecting")."""
    ghost = ButtonValue.encode("nosuchrequest", "a" * 64)
    view = {
        "id": "V1",
        "type": "modal",
        "callback_id": render.VIEW_EDIT,
        "private_metadata": ghost,
        "state": {"values": {render.ARGS_BLOCK: {render.ARGS_ACTION: {"value": "{}"}}}},
    }
    body = submit(sealed(view)).encode()
    version = bot.emu.workspace.version
    headers = {"Content-Type": FORM_TYPE} | sign(body, str(int(time.time())))
    async with httpx.AsyncClient() as http:
        resp = await http.post(bot.url + "/slack/events", content=body, headers=headers)
    assert resp.status_code == 200
    assert resp.json()["response_action"] == "errors"
    assert "no longer exists" in resp.json()["errors"][render.ARGS_BLOCK]
    with pytest.raises(NotFound):
        await bot.requests.get("nosuchrequest")
    assert bot.emu.workspace.version == version


SOCKET_CASES: list[Any] = [
    [1],
    None,
    {
        "type": "block_actions",
        "user": {"id": "UALICE", "team_id": TEAM},
        "trigger_id": "1",
        "actions": [],
    },
    {"type": "event_callback", "event": None},
    {
        "type": "view_submission",
        "user": {"id": "UALICE", "team_id": TEAM},
        "view": reject_view(reason=None),
    },
    {
        "type": "view_submission",
        "user": {"id": "UALICE", "team_id": TEAM},
        "view": reject_view(metadata=None),
    },
    {
        "type": "view_submission",
        "user": {"id": "UALICE", "team_id": TEAM},
        "view": reject_view(reason="x" * 3001),
    },
]


@pytest.mark.parametrize("slack_mode", ["socket"])
async def test_malformed_socket_mode_envelopes_are_acked_and_the_link_stays_up(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    rid = await bot.propose("refund", {"amount": 5})
    ch, ts = await bot.message_of(rid)
    value = ButtonValue.encode(rid, (await bot.requests.get(rid)).payload_hash)
    before, opened = await _slack_state(bot, rid), bot.emu.socket.opened
    for payload in SOCKET_CASES:
        filled = json.loads(_fill(json.dumps(payload), value))
        acked = await bot.emu.socket.send("interactive", filled, timeout=5)
        assert acked.payload is None  # acked, so Slack does not send it again; no answer
    assert await _slack_state(bot, rid) == before
    assert (bot.emu.socket.opened, bot.emu.socket.connected) == (opened, 1)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    # the link still carries a good click
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved() -> bool:  # the listener acks first, then decides
        return (await bot.requests.get(rid)).state == State.APPROVED

    await eventually(approved)


async def test_a_socket_frame_nested_too_deep_is_dropped_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from bot.slack.transport.socket_mode import SocketModeLink

    # the frame is refused before it could reach Bolt, so there need be none
    link = SocketModeLink(cast(AsyncApp, None), "xapp-x", "http://127.0.0.1:9/")
    frame = '{"type": "events_api", "envelope_id": "e", "payload": ' + "[" * 100_000
    assert link._on_text(None, frame) is False  # type: ignore[arg-type]
    assert not [r for r in caplog.records if r.exc_info]


async def test_an_edit_nested_too_deep_or_with_a_lone_surrogate_is_refused_in_the_modal(
    bot: Bot,
) -> None:
    """What a person may type in the Edit box: 1,500 brackets fit in its 3,000 characters."""
    from tests.e2e.test_slack_edits import _open_edit, _refused, _snapshot

    rid = await bot.propose("refund", {"amount": 5})
    view = await _open_edit(bot, rid)
    before = await _snapshot(bot, rid)
    deep = '{"amount": ' + "[" * 1490 + "]" * 1490 + "}"
    assert "deeper than 32 levels" in await _refused(bot, view, deep)
    assert "surrogate" in await _refused(bot, view, '{"amount": "\\ud800"}')
    assert await _snapshot(bot, rid) == before
