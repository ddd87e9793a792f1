"""Batch decisions through the real bot and the Slack emulator: the digest card that
three or more waiting calls of one tool from one requester get, and its "Approve all" /
"Reject all", each call still decided, sealed and audited on its own."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from bot.core.policy import parse_policy
from bot.core.states import State
from bot.slack.batch import card
from bot.slack.blocks import render
from bot.store import audit
from tests.e2e.conftest import POLICY, Agents, Bot, all_text, button_values
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}
BILLING = {"Authorization": "Bearer billing-token-0123456789"}


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_api_tokens": "billing-agent=billing-token-0123456789"}


def _digests(bot: Bot, ch: str) -> list[Any]:
    return [
        m
        for m in bot.emu.messages(ch)
        if any(b.get("block_id", "").startswith("hitl_digest") for b in m.blocks or [])
    ]


async def _live_digest(bot: Bot, ch: str, n: int) -> Any:
    """The digest once it lists `n` calls with its buttons."""

    async def probe() -> Any:
        for m in _digests(bot, ch):
            if f"Approve all {n}" in all_text(m.blocks):
                return m
        return None

    return await eventually(probe, what=f"a digest of {n} in {ch}")


async def _states(bot: Bot, rids: list[str]) -> list[State]:
    return [(await bot.requests.get(r)).state for r in rids]


async def _told(bot: Bot, user: str, needle: str) -> str:
    async def probe() -> str | None:
        return next((e.text for e in bot.emu.ephemerals(user) if needle in e.text), None)

    return await eventually(probe, what=f"{user} told {needle!r}")


async def _refunds(bot: Bot, n: int, **kw: Any) -> list[str]:
    return [
        await bot.propose(
            "refund", {"amount": 100 * (i + 1), "currency": "USD", "to": f"c-{i}"}, **kw
        )
        for i in range(n)
    ]


async def test_approve_all_five_decides_each_and_names_the_one_that_changed(bot: Bot) -> None:
    rids = await _refunds(bot, 5, requester="billing-agent")
    cards = [await bot.message_of(r) for r in rids]
    ch = cards[0][0]
    digest = await _live_digest(bot, ch, 5)
    shown = all_text(digest.blocks)
    assert "billing-agent" in shown and "1,500 USD" in shown
    assert all(r in shown for r in rids)  # each call listed, linking its own card
    assert "/archives/" in shown
    seen = copy.deepcopy(digest.blocks)
    drawn = [await bot.requests.get(r) for r in rids]  # as the digest showed them, oldest first
    drawn.sort(key=lambda r: (r.created_at, r.id))

    # Slack stops taking updates: the digest still shows all five when Alice clicks,
    # though Bob has meanwhile rejected the third on its own card.
    bot.emu.add_fault(500, 10_000, method="chat.update")
    ch3, ts3 = cards[2]
    await bot.emu.click("UBOB", render.ACTION_REJECT, channel=ch3, ts=ts3)
    view = await eventually(lambda: _open_view(bot, "UBOB"))
    await bot.emu.submit("UBOB", view.id, {render.REASON_BLOCK: {render.REASON_ACTION: "policy"}})
    await eventually(lambda: _in_state(bot, rids[2], State.CANCELLED))

    await bot.emu.click("UALICE", card.ACTION_APPROVE_ALL, channel=ch, ts=digest.ts)
    said = await _told(bot, "UALICE", "Approved 4 of 5")
    assert rids[2] in said and "rejected by <@UBOB>" in said  # the one left out, named and why
    assert (
        await _states(bot, rids) == [State.APPROVED] * 2 + [State.CANCELLED] + [State.APPROVED] * 2
    )

    group, vh = card.DigestValue.decode(button_values(seen)[card.ACTION_APPROVE_ALL])
    assert vh == card.view_hash([card.Shown(r.id, r.version, r.payload_hash, "") for r in drawn])
    for rid in rids[:2] + rids[3:]:
        req = await bot.requests.get(rid)
        assert req.resolution is not None and req.resolution.actor == "UALICE"
        assert req.resolution.seal  # sealed like a click on its card: executors accept it
        approved = [e for e in await audit.entries(bot.redis, rid) if e.event == "approve"]
        assert len(approved) == 1 and approved[0].kind == "transition"
        assert approved[0].view_hash == vh and approved[0].via == f"digest:{group}"
    trail = await audit.entries(bot.redis, rids[2])
    assert not [e for e in trail if e.actor == "UALICE"]  # left out before any attempt

    async with httpx.AsyncClient(base_url=bot.url, headers=BILLING) as c:  # the seal holds
        claimed = await c.post(f"/v1/approvals/{rids[0]}/claim")
    assert claimed.status_code == 200 and claimed.json()["state"] == "executing"

    bot.emu.faults.clear()  # Slack recovers: nothing waits, the digest says so
    await eventually(lambda: _closed(bot, ch, digest.ts), what="the digest closed")


async def test_a_call_the_clicker_may_not_decide_is_left_out_named_and_audited(bot: Bot) -> None:
    # Carol is no approver of the high tier (a refund over 1,000): she decides the rest.
    rids = await _refunds(bot, 2) + [
        await bot.propose("refund", {"amount": 1500, "currency": "USD", "to": "c-big"})
    ]
    ch, _ = await bot.message_of(rids[0])
    digest = await _live_digest(bot, ch, 3)
    assert "1,800 USD" in all_text(digest.blocks)
    await bot.emu.click("UCAROL", card.ACTION_APPROVE_ALL, channel=ch, ts=digest.ts)
    said = await _told(bot, "UCAROL", "Approved 2 of 3")
    assert "not yours to decide" in said and rids[2] in said
    assert await _states(bot, rids) == [State.APPROVED, State.APPROVED, State.PENDING_REVIEW]
    refused = [e for e in await audit.entries(bot.redis, rids[2]) if e.actor == "UCAROL"]
    assert [(e.kind, e.reason_code) for e in refused] == [("refused", "not_eligible")]


async def test_reject_all_asks_one_reason_and_rejects_each(bot: Bot) -> None:
    rids = [await bot.propose("drop_claw", {"target": t}) for t in ("bear", "owl", "fox")]
    ch, _ = await bot.message_of(rids[0])
    digest = await _live_digest(bot, ch, 3)
    assert "USD" not in all_text(digest.blocks)  # no amount: only the count
    await bot.emu.click("UALICE", card.ACTION_REJECT_ALL, channel=ch, ts=digest.ts)
    view = await eventually(lambda: _open_view(bot, "UALICE"))
    assert view.definition["callback_id"] == card.VIEW_REJECT_ALL
    out = await bot.emu.submit(
        "UALICE", view.id, {render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: "no"}}
    )
    assert out.view_action != "closed"  # a reason code is required
    out = await bot.emu.submit(
        "UALICE",
        view.id,
        {
            render.REASON_BLOCK: {render.REASON_ACTION: "wrong_target"},
            render.REASON_TEXT_BLOCK: {render.REASON_TEXT_ACTION: "leave the animals be"},
        },
    )
    assert out.view_action == "closed", out
    await _told(bot, "UALICE", "Rejected 3 of 3")
    for rid in rids:
        req = await bot.requests.get(rid)
        assert req.state in (State.REJECTED, State.CANCELLED)  # rejected, then cancelled
        assert req.resolution is not None and req.resolution.reason_code == "wrong_target"
        assert req.resolution.text == "leave the animals be" and req.resolution.seal
    await eventually(lambda: _closed(bot, ch, digest.ts), what="the digest closed")


async def test_no_batch_buttons_for_critical_or_a_quorum(bot: Bot) -> None:
    deploys = [
        await bot.propose("deploy", {"service": s, "version": "2"}) for s in ("api", "web", "db")
    ]
    ch, _ = await bot.message_of(deploys[0])
    quorum = copy.deepcopy(POLICY)
    quorum["tiers"]["low"]["approvals_required"] = 2
    for i in range(3):
        made = await bot.requests.create(
            parse_policy(quorum), tool="post_note", args={"text": f"n{i}"}, requester="agent:test"
        )
        await bot.message_of(made.request.id)

    async def both() -> list[str] | None:
        texts = [all_text(m.blocks) for m in _digests(bot, ch)]
        return texts if len(texts) == 2 else None

    texts = await eventually(both, what="two digests, without buttons")
    assert any("critical call is decided on its own card" in t for t in texts), texts
    assert any("needs 2 approvers" in t for t in texts), texts
    assert not any(button_values(m.blocks) for m in _digests(bot, ch))


async def test_digest_follows_requests_made_over_the_api_and_goes_under_three(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        made = [
            await c.post("/v1/approvals", json={"tool": "drop_claw", "args": {"target": t}})
            for t in ("<!channel>", "owl", "fox")
        ]
    rids = [r.json()["id"] for r in made]
    ch, _ = await bot.message_of(rids[0])
    digest = await _live_digest(bot, ch, 3)
    shown = all_text(digest.blocks)
    assert "&lt;!channel&gt;" in shown and "<!channel>" not in shown  # data, shown literally
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        more = await c.post("/v1/approvals", json={"tool": "drop_claw", "args": {"target": "elk"}})
    rids.append(more.json()["id"])
    await _live_digest(bot, ch, 4)  # the same card, redrawn
    assert len(_digests(bot, ch)) == 1

    for rid in rids[:2]:  # decided on their own cards: two remain, the batch is over
        c_ch, c_ts = await bot.message_of(rid)
        await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=c_ch, ts=c_ts)
    await eventually(lambda: _closed(bot, ch, digest.ts), what="the digest closed")
    assert await _states(bot, rids[2:]) == [State.PENDING_REVIEW] * 2

    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        await c.post("/v1/approvals", json={"tool": "drop_claw", "args": {"target": "yak"}})
    await _live_digest(bot, ch, 3)  # three again: a new digest, below the closed one
    assert len(_digests(bot, ch)) == 2


async def _open_view(bot: Bot, user: str) -> Any:
    return bot.emu.open_view(user)


async def _in_state(bot: Bot, rid: str, want: State) -> bool:
    return (await bot.requests.get(rid)).state == want


async def _closed(bot: Bot, ch: str, ts: str) -> bool:
    m = next(m for m in bot.emu.messages(ch) if m.ts == ts)
    return "Fewer than three" in all_text(m.blocks) and not button_values(m.blocks)


async def test_calls_filed_by_the_worker_are_batched_and_run_once_approved(
    bot: Bot, agents: Agents
) -> None:
    homes = [
        (await bot.emu.post("UKID", "#general", f"<@UBOT> Get me the bear! ({i})")).ts
        for i in range(3)
    ]
    for home in homes:
        await _reply_with(bot, "general", home, "Is this the one?")
        await bot.emu.post("UKID", "general", "yes", thread_ts=home)
    ch = "CHITLAPPROVALS"
    digest = await _live_digest(bot, ch, 3)
    assert "drop_claw" in all_text(digest.blocks)
    await bot.emu.click("UPARENT", card.ACTION_APPROVE_ALL, channel=ch, ts=digest.ts)
    await _told(bot, "UPARENT", "Approved 3 of 3")

    for home in homes:  # each run's drop, sealed and approved, ran in the worker
        await _reply_with(bot, "general", home, "Here is your bear")


async def _reply_with(bot: Bot, ch: str, ts: str, needle: str) -> Any:
    async def probe() -> Any:
        found = [m for m in bot.emu.replies(ch, ts) if needle in (m.text + all_text(m.blocks))]
        return found[-1] if found else None

    return await eventually(probe, timeout_s=15, what=needle)


async def test_a_call_escalated_since_the_digest_was_drawn_is_left_out(bot: Bot) -> None:
    first = await bot.propose("drop_claw", {"target": "bear"})
    bot.clock.advance(6 * 60_000)
    rest = [await bot.propose("drop_claw", {"target": t}) for t in ("owl", "fox")]
    ch, _ = await bot.message_of(first)
    digest = await _live_digest(bot, ch, 3)
    bot.emu.add_fault(500, 10_000, method="chat.update")  # the digest keeps what it drew
    bot.clock.advance(5 * 60_000)  # the first one's 10 minutes are up: the next level's turn

    async def escalated() -> bool:
        return (await bot.requests.get(first)).level == 1

    await eventually(escalated, what="the first call escalated")
    await bot.emu.click("UALICE", card.ACTION_APPROVE_ALL, channel=ch, ts=digest.ts)
    said = await _told(bot, "UALICE", "Approved 2 of 3")
    assert first in said and "(escalated)" in said
    assert await _states(bot, [first, *rest]) == [State.PENDING_REVIEW] + [State.APPROVED] * 2
    assert not [e for e in await audit.entries(bot.redis, first) if e.actor == "UALICE"]


async def test_proposals_are_never_batched(bot: Bot) -> None:
    """A proposal is approved only by choosing one of its calls on its own card: three
    waiting proposals make no digest, and plain calls beside them batch without them."""
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        props = [
            await c.post(
                "/v1/approvals",
                json={"tool": "drop_claw", "candidates": [{"target": t}, {"target": "owl"}]},
            )
            for t in ("fox", "elk", "yak")
        ]
        assert [p.status_code for p in props] == [201] * 3
        for rid in [p.json()["id"] for p in props]:
            await bot.message_of(rid)  # each proposal has its own card
        plain = [
            await c.post("/v1/approvals", json={"tool": "drop_claw", "args": {"target": t}})
            for t in ("ant", "bee", "cat")
        ]
    ch, _ = await bot.message_of(plain[0].json()["id"])
    digest = await _live_digest(bot, ch, 3)
    shown = all_text(digest.blocks)
    assert all(p.json()["id"] in shown for p in plain)
    assert not any(p.json()["id"] in shown for p in props)
    assert len(_digests(bot, ch)) == 1
