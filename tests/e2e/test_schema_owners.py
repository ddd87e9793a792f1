"""A person's Edit is checked against the schema of the card's own agent, safely.

Two API identities send schemas for a tool of the same name. Each card's Edit modal
checks the edit against the schema its own requester sent: the second agent's looser
schema, sent later, changes nothing of the first agent's card (schemas kept per tool
name would let the last writer win). And a backtracking pattern in the schema a
card's agent sent is run by RE2 in the modal too: the answer is prompt.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from bot.core.states import State
from tests.e2e.conftest import Bot
from tests.e2e.test_slack_edits import CLAW_SCHEMA, _open_edit, _refused, _snapshot, _submit
from tests.support.poll import eventually

A_AUTH = {"Authorization": "Bearer api-token-0123456789"}  # identity "api"
B_TOKEN = "agent-b-token-0123456789"
B_AUTH = {"Authorization": f"Bearer {B_TOKEN}"}


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_api_tokens": f"agent-b={B_TOKEN}"}


async def _create(bot: Bot, auth: dict[str, str], body: dict[str, Any]) -> str:
    async with httpx.AsyncClient(base_url=bot.url, headers=auth, timeout=30) as http:
        made = await http.post("/v1/approvals", json=body)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def test_another_agents_schema_for_the_same_tool_never_checks_my_card(bot: Bot) -> None:
    mine = await _create(
        bot, A_AUTH, {"tool": "claw_api", "args": {"target": "bear"}, "args_schema": CLAW_SCHEMA}
    )
    # Sent after mine, for the same tool name: before, the last writer's schema was the one.
    theirs = await _create(
        bot,
        B_AUTH,
        {"tool": "claw_api", "args": {"target": "bear"}, "args_schema": {"type": "object"}},
    )

    view = await _open_edit(bot, mine)
    before = await _snapshot(bot, mine)
    assert "maximum of 10" in await _refused(bot, view, '{"target": "bear", "force": 11}')
    assert "speed" in await _refused(bot, view, '{"target": "bear", "speed": 9}')
    assert await _snapshot(bot, mine) == before

    # Their card keeps to their own (looser) schema.
    view = await _open_edit(bot, theirs)
    ok = await _submit(bot, view, '{"target": "bear", "force": 11, "speed": 9}')
    assert ok.view_action == "closed", ok

    async def approved() -> Any:
        req = await bot.requests.get(theirs)
        return req if req.state == State.APPROVED else None

    assert (await eventually(approved)).args == {"target": "bear", "force": 11, "speed": 9}


async def test_a_backtracking_pattern_in_a_cards_schema_is_checked_promptly(bot: Bot) -> None:
    schema = {"type": "object", "properties": {"tag": {"type": "string", "pattern": "^(a+)+$"}}}
    rid = await _create(
        bot, B_AUTH, {"tool": "tagger", "args": {"tag": "aaa"}, "args_schema": schema}
    )
    view = await _open_edit(bot, rid)
    before = await _snapshot(bot, rid)
    started = time.monotonic()
    refused = await _refused(bot, view, '{"tag": "' + "a" * 30 + '!"}')
    # Python's re would backtrack ~2**30 steps here (minutes); RE2 answers in
    # milliseconds. 10 s tells the two apart even on a machine whose cores are busy.
    assert time.monotonic() - started < 10.0
    assert "does not match" in refused
    assert await _snapshot(bot, rid) == before
