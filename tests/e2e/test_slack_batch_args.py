"""What a digest row shows of each call, through the real bot and the Slack emulator:
every argument is named (values cut visibly, and the "Approve all" confirm names the
cut ones), and a drawing whose row cannot list a call's arguments offers no "Approve
all", nor does a click naming it anyway approve that call."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.core.states import State
from bot.slack.batch import card
from tests.e2e.conftest import SECRET, Bot, all_text, button_values
from tests.support.poll import eventually

TEAM = "TEMULATOR"  # the emulator's workspace
WIRE_TO = "GB29 NWBK 6016 1331 9268 19 — the attacker's own account, not the customer's"


def _digest(bot: Bot, ch: str, needle: str) -> Any:
    for m in bot.emu.messages(ch):
        blocks = m.blocks or []
        digest = any(b.get("block_id", "").startswith("hitl_digest") for b in blocks)
        if digest and needle in all_text(blocks):
            return m
    return None


def _confirm_text(blocks: list[dict[str, Any]]) -> str:
    for b in blocks:
        for el in b.get("elements", []) if b.get("type") == "actions" else []:
            if el["action_id"] == card.ACTION_APPROVE_ALL:
                return str(el["confirm"]["text"]["text"])
    raise AssertionError("no Approve all button")


async def test_a_fifth_argument_is_named_on_its_row_and_its_cut_value_in_the_confirm(
    bot: Bot,
) -> None:
    base = {"amount": 100, "currency": "USD", "order": "o-1", "reason": "damaged"}
    rids = [await bot.propose("refund", base | {"order": f"o-{i}"}) for i in range(2)]
    rids.append(await bot.propose("refund", base | {"wire_to": WIRE_TO}))
    ch, _ = await bot.message_of(rids[0])
    digest = await eventually(lambda: _digest(bot, ch, "Approve all 3"), what="the digest")
    shown = all_text(digest.blocks)
    assert "wire_to" in shown and WIRE_TO[:30] in shown  # named, its value cut visibly
    assert WIRE_TO not in shown and "+1 more" not in shown
    confirm = _confirm_text(digest.blocks)
    assert "exactly as shown" not in confirm
    assert re.search(r"#[123] wire_to\.", confirm)  # cut short: named where one confirms


async def test_a_call_with_more_arguments_than_a_row_lists_gets_no_approve_all(
    bot: Bot,
) -> None:
    plain = {"amount": 100, "currency": "USD", "to": "c-1"}
    many = {f"field_{i:02d}": i for i in range(card.ROW_ARGS)} | {"zz_wire_to": WIRE_TO}
    rids = [await bot.propose("refund", plain | {"to": f"c-{i}"}) for i in range(2)]
    rids.append(await bot.propose("refund", {"amount": 5, **many}))
    ch, _ = await bot.message_of(rids[0])
    digest = await eventually(lambda: _digest(bot, ch, "Reject all 3"), what="the digest")
    values = button_values(digest.blocks)
    assert card.ACTION_APPROVE_ALL not in values  # no bulk approval over a hidden argument
    text = all_text(digest.blocks)
    assert "No *Approve all*" in text
    assert "more arguments not shown here" in text

    # A click naming this drawing anyway (a forged payload): the two plain calls are
    # approved, the one whose arguments the row hides is not, and the clicker is told.
    got = await _signed_approve_all(bot, "UALICE", values[card.ACTION_REJECT_ALL], ch)
    assert got.status_code == 200

    async def told() -> str | None:
        texts = [e.text for e in bot.emu.ephemerals("UALICE")]
        return next((t for t in texts if "Approved 2 of 3" in t), None)

    said = await eventually(told, what="Alice told what was approved")
    assert rids[2] in said and "does not show" in said
    states = [(await bot.requests.get(r)).state for r in rids]
    assert states == [State.APPROVED, State.APPROVED, State.PENDING_REVIEW]


async def _signed_approve_all(bot: Bot, user: str, value: str, channel: str) -> httpx.Response:
    payload = {
        "type": "block_actions",
        "user": {"id": user, "team_id": TEAM},
        "team": {"id": TEAM},
        "actions": [{"action_id": card.ACTION_APPROVE_ALL, "value": value, "type": "button"}],
        "channel": {"id": channel},
        "container": {"type": "message"},
        "trigger_id": "1.2.3",
    }
    body = urlencode({"payload": json.dumps(payload)})
    ts = str(int(time.time()))
    sig = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={sig}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    async with httpx.AsyncClient() as http:
        return await http.post(bot.url + "/slack/events", content=body, headers=headers)
