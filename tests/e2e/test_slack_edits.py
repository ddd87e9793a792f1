"""Edit and approve through the Slack emulator: an edit is checked before it is approved.

A refused edit stays inside the modal with the reason, and the request is exactly
as it was (state, version, payload hash, audit trail); a valid one is approved with
the edited arguments.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from bot.core.states import State
from bot.slack.blocks import render
from bot.store import audit
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

# The schema an outside agent declares for its claw: force is capped at 10.
CLAW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "target": {"type": "string", "enum": ["bear", "penguin", "unicorn", "duck"]},
        "force": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["target"],
    "additionalProperties": False,
}


@pytest.fixture(params=["http", "socket"])
def slack_mode(request: pytest.FixtureRequest) -> str:
    """The modal's answer travels differently over HTTP and Socket Mode: test both."""
    return str(request.param)


async def _open_edit(bot: Bot, rid: str, user: str = "UKID") -> Any:
    ch, ts = await bot.message_of(rid)
    # A modal still open from an earlier Edit (a refused edit keeps it open) is not this one.
    before = bot.emu.open_view(user)
    await bot.emu.click(user, render.ACTION_EDIT, channel=ch, ts=ts)

    async def opened() -> Any:
        view = bot.emu.open_view(user)
        if view is None or (before is not None and view.id == before.id):
            return None
        return view if view.definition["callback_id"] == render.VIEW_EDIT else None

    return await eventually(opened)


async def _submit(bot: Bot, view: Any, text: str, user: str = "UKID") -> Any:
    return await bot.emu.submit(user, view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: text}})


async def _snapshot(bot: Bot, rid: str) -> tuple[Any, ...]:
    req = await bot.requests.get(rid)
    trail = await audit.entries(bot.redis, rid)
    return req.state, req.version, req.payload_hash, req.args, [e.raw for e in trail]


async def _refused(bot: Bot, view: Any, text: str) -> str:
    out = await _submit(bot, view, text)
    assert out.view_action == "errors", out
    assert set(out.errors) == {render.ARGS_BLOCK}
    return str(out.errors[render.ARGS_BLOCK])


async def test_an_edit_outside_the_schema_is_refused_and_changes_nothing(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear", "force": 5}, args_schema=CLAW_SCHEMA)
    view = await _open_edit(bot, rid)
    before = await _snapshot(bot, rid)

    too_hard = await _refused(bot, view, '{"target": "penguin", "force": 11}')
    assert "force" in too_hard and "maximum of 10" in too_hard
    unknown = await _refused(bot, view, '{"target": "penguin", "force": 3, "speed": 9}')
    assert "speed" in unknown
    wrong_prize = await _refused(bot, view, '{"target": "teddy"}')
    assert "target" in wrong_prize
    assert await _snapshot(bot, rid) == before  # nothing moved: not even the audit

    ok = await _submit(bot, view, '{"target": "penguin", "force": 7}')
    assert ok.view_action == "closed", ok

    async def approved() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == State.APPROVED else None

    req = await eventually(approved)
    assert req.args == {"target": "penguin", "force": 7}
    assert req.original_hash == before[2] and req.payload_hash != before[2]


async def test_malformed_json_and_non_objects_are_refused_in_the_modal(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear", "force": 5}, args_schema=CLAW_SCHEMA)
    view = await _open_edit(bot, rid)
    before = await _snapshot(bot, rid)
    assert "JSON" in await _refused(bot, view, '{"target": "penguin", ')
    assert "JSON object" in await _refused(bot, view, '["penguin"]')
    assert await _snapshot(bot, rid) == before


async def test_with_no_schema_an_edit_may_change_values_but_not_names(bot: Bot) -> None:
    # "refund" was never registered with a schema: only the call's own names are allowed.
    rid = await bot.propose("refund", {"amount": 900, "to": "cust-1"})
    view = await _open_edit(bot, rid)
    before = await _snapshot(bot, rid)
    assert "force" in await _refused(bot, view, '{"amount": 90, "to": "cust-1", "force": 1}')
    assert "to" in await _refused(bot, view, '{"amount": 90}')
    assert await _snapshot(bot, rid) == before
    ok = await _submit(bot, view, '{"amount": 90, "to": "cust-2"}')
    assert ok.view_action == "closed", ok


async def test_the_edit_box_starts_from_the_current_arguments(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 900, "to": "cust-1"})
    view = await _open_edit(bot, rid)
    box = next(b for b in view.definition["blocks"] if b.get("block_id") == render.ARGS_BLOCK)
    assert json.loads(box["element"]["initial_value"]) == {"amount": 900, "to": "cust-1"}
    # A submit that types nothing sends the initial value, as Slack does: the same call.
    out = await bot.emu.submit("UKID", view.id, {})
    assert out.view_action == "closed", out

    async def decided() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == State.APPROVED else None

    assert (await eventually(decided)).args == {"amount": 900, "to": "cust-1"}


async def test_a_schema_posted_to_the_api_checks_the_edit(bot: Bot) -> None:
    auth = {"Authorization": "Bearer api-token-0123456789"}
    async with httpx.AsyncClient(base_url=bot.url, headers=auth) as http:
        bad_schema = {"tool": "claw_api", "args": {}, "args_schema": {"type": "nope"}}
        assert (await http.post("/v1/approvals", json=bad_schema)).status_code == 422
        misfit = {"tool": "claw_api", "args": {"target": "x"}, "args_schema": CLAW_SCHEMA}
        assert (await http.post("/v1/approvals", json=misfit)).status_code == 422
        body = {"tool": "claw_api", "args": {"target": "bear"}, "args_schema": CLAW_SCHEMA}
        made = await http.post("/v1/approvals", json=body)
        assert made.status_code == 201, made.text
        rid = made.json()["id"]

    view = await _open_edit(bot, rid)
    before = await _snapshot(bot, rid)
    refused = await _refused(bot, view, '{"target": "bear", "force": 11}')
    assert "maximum of 10" in refused
    assert await _snapshot(bot, rid) == before
