"""Choosing among proposals, end to end: the real bot behind the Slack emulator, the
proposal filed over the real HTTP API (and through the SDK), chosen by clicks, claimed
and run as the chosen candidate only."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from bot.core.args.payload import payload_hash
from bot.core.candidates import candidate_hashes
from bot.core.states import State
from bot.sdk import Gate
from bot.slack.blocks.proposals import ACTION_CHOOSE
from bot.store import audit
from tests.e2e.conftest import Bot, all_text, button_values
from tests.support.poll import eventually

TOKEN = "api-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REVIEW = "#hitl-approvals"
CANDS: list[dict[str, Any]] = [
    {"order": "A-1042", "amount": 42.5, "note": "<!channel> duplicate charge"},
    {"order": "A-1077", "amount": 19.9, "note": "late parcel"},
]


async def _file(api: httpx.AsyncClient, tool: str, cands: list[dict[str, Any]]) -> str:
    made = await api.post("/v1/approvals", json={"tool": tool, "candidates": cands})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def _card(bot: Bot, rid: str) -> Any:
    ch, ts = await bot.message_of(rid)
    return next(m for m in bot.emu.messages(ch) if m.ts == ts)


async def _fresh(bot: Bot, rid: str, ts: str, want: str) -> Any:
    def updated() -> Any:
        m = next(m for m in bot.emu.messages(REVIEW) if m.ts == ts)
        return m if want in all_text(m.blocks) else None

    return await eventually(updated, what=f"the card showing {want!r}")


async def test_the_chosen_candidate_is_approved_claimed_and_run_and_no_other(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        rid = await _file(api, "refund", CANDS)
        card = await _card(bot, rid)
        text = all_text(card.blocks)
        # Every candidate in full, escaped; a Choose button each, and Reject.
        assert "A-1042" in text and "A-1077" in text and "late parcel" in text
        assert "<!channel>" not in text and "&lt;!channel&gt;" in text
        buttons = button_values(card.blocks)
        assert "hitl_approve" not in buttons and "hitl_reject" in buttons
        choose = [b["accessory"] for b in card.blocks if b.get("accessory", {}).get("action_id")]
        assert [c["action_id"] for c in choose] == [f"{ACTION_CHOOSE}_0", f"{ACTION_CHOOSE}_1"]
        await bot.emu.click("UALICE", f"{ACTION_CHOOSE}_1", channel=card.channel, ts=card.ts)
        got = (await api.get(f"/v1/approvals/{rid}", params={"wait": 5})).json()
        assert got["state"] == "approved" and got["args"] == CANDS[1]
        assert got["resolution"]["actor"] == "UALICE"
        assert got["payload_hash"] == payload_hash("refund", CANDS[1])
        claimed = (await api.post(f"/v1/approvals/{rid}/claim")).json()
        assert claimed["state"] == "executing" and claimed["args"] == CANDS[1]
        done = await api.post(
            f"/v1/approvals/{rid}/result",
            json={"ok": True, "detail": "refunded", "fence": claimed["fence"]},
        )
        assert done.json()["state"] == "completed"
    # What the card showed and what was chosen are audited by hash.
    lines = [json.loads(x) for x in await audit.lines(bot.redis, rid)]
    shown = list(candidate_hashes("refund", CANDS))
    assert next(e for e in lines if e["event"] == "create")["candidates"] == shown
    choice = next(e for e in lines if e["event"] == "edit_and_approve")
    assert choice["chosen"] == shown[1] and choice["candidates"] == shown
    final = await _fresh(bot, rid, card.ts, "chosen")
    assert not any(
        b.get("accessory", {}).get("action_id", "").startswith(ACTION_CHOOSE) for b in final.blocks
    )


async def test_a_quorum_needs_its_approvers_on_the_same_candidate(bot: Bot) -> None:
    cands = [{"service": "api", "version": "2.1.0"}, {"service": "api", "version": "2.0.9"}]
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        rid = await _file(api, "deploy", cands)  # critical: two approvals
        card = await _card(bot, rid)
        await bot.emu.click("UALICE", f"{ACTION_CHOOSE}_0", channel=card.channel, ts=card.ts)
        await _fresh(bot, rid, card.ts, "chosen so far")
        await bot.emu.click("UBOB", f"{ACTION_CHOOSE}_1", channel=card.channel, ts=card.ts)

        async def bob_counted() -> Any:
            req = await bot.requests.get(rid)
            return req if [a.actor for a in req.approvals] == ["UBOB"] else None

        req = await eventually(bob_counted, what="Bob's choice restarting the count")
        assert req.state == State.PENDING_REVIEW and req.args == cands[1]
        await bot.emu.click("UCAROL", f"{ACTION_CHOOSE}_1", channel=card.channel, ts=card.ts)
        got = (await api.get(f"/v1/approvals/{rid}", params={"wait": 5})).json()
        assert got["state"] == "approved" and got["args"] == cands[1]
        assert [a["actor"] for a in got["approvals"]] == ["UBOB", "UCAROL"]
        claimed = (await api.post(f"/v1/approvals/{rid}/claim")).json()
        assert claimed["args"] == cands[1]


async def test_a_choice_by_someone_who_may_not_decide_is_refused(bot: Bot) -> None:
    big = [{"order": "B-1", "amount": 5000}, {"order": "B-2", "amount": 50}]
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        rid = await _file(api, "refund", big)  # 5000 > 1000: high, only approvers decide
        req = await bot.requests.get(rid)
        assert req.risk.value == "high"  # the highest tier any candidate reaches
        card = await _card(bot, rid)
        # high risk: each Choose asks for confirmation, as Approve does
        chooses = [b["accessory"] for b in card.blocks if "accessory" in b]
        assert len(chooses) == 2 and all("confirm" in c for c in chooses)
        # UTEAM0 is in no approvers' group
        await bot.emu.click("UTEAM0", f"{ACTION_CHOOSE}_1", channel=card.channel, ts=card.ts)

        def told() -> str | None:
            return next((e.text for e in bot.emu.ephemerals("UTEAM0")), None)

        assert "may not" in (await eventually(told, what="UTEAM0 told they may not choose"))
        after = (await api.get(f"/v1/approvals/{rid}")).json()
        assert after["state"] == "pending_review" and after["args"] == {}
        lines = [json.loads(x) for x in await audit.lines(bot.redis, rid)]
        assert any(e["kind"] == "refused" and e["reason_code"] == "not_eligible" for e in lines)


async def test_bad_proposals_are_422(bot: Bot) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "number", "maximum": 30}}}
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        for body in (
            {"tool": "refund", "candidates": [{"amount": i} for i in range(6)]},
            {"tool": "refund", "candidates": [CANDS[0]]},
            {"tool": "refund", "args": {"amount": 1}, "candidates": CANDS},
            {"tool": "refund", "candidates": CANDS, "args_schema": schema},
            {"tool": "move_claw", "candidates": [{"to": "left"}, {"to": "right"}]},
        ):
            resp = await api.post("/v1/approvals", json=body)
            assert resp.status_code == 422, (body, resp.text)
            assert "candidate" in resp.text or "propose" in resp.text
        assert await bot.requests.list_pending() == []


async def test_sdk_propose_returns_the_chosen_call(bot: Bot) -> None:
    async with Gate(api_url=bot.url, api_token=TOKEN) as gate:
        proposing = asyncio.create_task(gate.propose("refund", CANDS, timeout=30))

        async def pending() -> Any:
            reqs = await bot.requests.list_pending()
            return reqs[0].id if reqs else None

        rid = await eventually(pending, what="the SDK's proposal")
        card = await _card(bot, rid)
        await bot.emu.click("UALICE", f"{ACTION_CHOOSE}_0", channel=card.channel, ts=card.ts)
        req = await asyncio.wait_for(proposing, 15)
        assert req.args == CANDS[0] and req.state == State.APPROVED


async def test_approve_replied_in_the_thread_does_not_approve_a_proposal(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as api:
        rid = await _file(api, "refund", CANDS)
    card = await _card(bot, rid)
    await bot.emu.post("UALICE", card.channel, "approve", thread_ts=card.ts)

    def told() -> str | None:
        return next((e.text for e in bot.emu.ephemerals("UALICE")), None)

    assert "candidate" in await eventually(told, what="Alice told to choose a candidate")
    req = await bot.requests.get(rid)
    assert req.state == State.PENDING_REVIEW and req.args == {}
