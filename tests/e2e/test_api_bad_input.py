"""Bad input to the /v1 API: a 4xx JSON error before anything is stored or posted to Slack.

Arguments nested 256 deep, once stored and posted, would answer 500 on every later
GET, claim and result; a lone surrogate would answer 500 at once. Each row here runs
against the real bot (API, notifier, emulator) and checks that the answer is a JSON
error and that neither Redis nor Slack changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from bot.core.args.payload import MAX_ARGS_DEPTH
from bot.core.states import State
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}


def nested(depth: int) -> dict[str, Any]:
    """An args object `depth` levels deep (the object itself is level 1)."""
    value: Any = 1
    for _ in range(depth - 1):
        value = [value]
    return {"x": value}


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    body: str | bytes  # sent as it is, so invalid JSON text can be sent too
    status: int
    error: str


def _json(value: Any) -> str:
    return json.dumps(value)  # ASCII: a lone surrogate goes out as the escape \ud800


LONE = "\ud800"
CASES = [
    Case(
        "args 256 deep",
        "/v1/approvals",
        _json({"tool": "refund", "args": nested(256)}),
        422,
        "validation_error",
    ),
    Case(
        f"args {MAX_ARGS_DEPTH + 1} deep",
        "/v1/approvals",
        _json({"tool": "refund", "args": nested(MAX_ARGS_DEPTH + 1)}),
        422,
        "validation_error",
    ),
    Case(
        "args_schema 100 deep",
        "/v1/approvals",
        _json({"tool": "refund", "args": {}, "args_schema": {"type": "object", **nested(100)}}),
        422,
        "validation_error",
    ),
    Case(
        "body 100k deep",
        "/v1/approvals",
        '{"tool": "refund", "args": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}",
        400,
        "bad_request",
    ),
    Case(
        "not UTF-8",
        "/v1/approvals",
        b'{"tool": "refund", "args": {"x": "\xff"}}',
        400,
        "bad_request",
    ),
    Case(
        "lone surrogate in an arg",
        "/v1/approvals",
        _json({"tool": "refund", "args": {"amount": 5, "note": LONE}}),
        422,
        "validation_error",
    ),
    Case(
        "lone surrogate in an arg name",
        "/v1/approvals",
        _json({"tool": "refund", "args": {"amount": 5, LONE: 1}}),
        422,
        "validation_error",
    ),
    Case(
        "lone surrogate in on_behalf_of",
        "/v1/approvals",
        _json({"tool": "refund", "args": {"amount": 5}, "on_behalf_of": "a" + LONE}),
        422,
        "validation_error",
    ),
    Case(
        "lone surrogate in an idempotency key",
        "/v1/approvals",
        _json({"tool": "refund", "args": {"amount": 5}, "idempotency_key": LONE}),
        422,
        "validation_error",
    ),
    Case(
        "lone surrogate in a question",
        "/v1/questions",
        _json({"question": "which " + LONE}),
        422,
        "validation_error",
    ),
    Case(
        "lone surrogate in a run prompt",
        "/v1/runs",
        _json({"agent": "claw", "prompt": LONE}),
        422,
        "validation_error",
    ),
]


async def _everything(bot: Bot) -> tuple[Any, ...]:
    """Every key, every event queued for the notifier, and Slack's state.

    The notifier's streams are created in the background at start, so they count by
    their entries, not by their existence."""
    keys = sorted(await bot.redis.keys("hitl:*"))
    streams = [k for k in keys if k.endswith(":events")]
    queued = sum([await bot.redis.xlen(k) for k in streams])
    return tuple(k for k in keys if k not in streams), queued, bot.emu.workspace.version


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
async def test_bad_api_input_gets_a_4xx_json_error_and_changes_nothing(
    bot: Bot, case: Case
) -> None:
    before = await _everything(bot)
    headers = AUTH | {"Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=bot.url) as http:
        resp = await http.post(case.path, content=case.body, headers=headers)
    assert resp.status_code == case.status, resp.text
    assert resp.json()["error"] == case.error and resp.json()["detail"]
    assert await _everything(bot) == before


async def test_args_at_the_depth_limit_are_accepted_and_every_later_call_answers(
    bot: Bot,
) -> None:
    args = {"amount": 5, **nested(MAX_ARGS_DEPTH)}
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as http:
        made = await http.post("/v1/approvals", json={"tool": "refund", "args": args})
        assert made.status_code == 201, made.text
        rid = made.json()["id"]
        assert made.json()["args"] == args
        await bot.message_of(rid)  # posted to Slack like any other
        ch, ts = await bot.message_of(rid)
        await bot.emu.click("UALICE", "hitl_approve", channel=ch, ts=ts)

        async def approved() -> bool:
            return (await bot.requests.get(rid)).state == State.APPROVED

        await eventually(approved)
        got = await http.get(f"/v1/approvals/{rid}")
        claimed = await http.post(f"/v1/approvals/{rid}/claim")
        done = await http.post(f"/v1/approvals/{rid}/result", json={"ok": True})
        again = await http.get(f"/v1/approvals/{rid}", params={"wait": 1})
    assert [r.status_code for r in (got, claimed, done, again)] == [200, 200, 200, 200]
    assert again.json()["state"] == State.COMPLETED and again.json()["args"] == args
