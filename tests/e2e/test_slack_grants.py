"""Standing approvals through the real bot, the Slack emulator and the HTTP API: a grant
made from a card's "Approve and allow similar" dialog passes a later call inside its
bounds at once, gates one outside them, ends when it expires or is revoked, and is never
made by someone who may not approve the call."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import httpx
import pytest

from bot.core.grants import reason_of
from bot.core.states import State
from bot.slack.blocks.escape import ButtonValue
from bot.slack.grants.card import ACTION_GRANT, ACTION_REVOKE, VIEW_GRANT
from bot.slack.grants.views import (
    MAX_ACTION,
    MAX_BLOCK,
    SCOPE_ACTION,
    SCOPE_BLOCK,
    USES_ACTION,
    USES_BLOCK,
)
from bot.store import audit, keys
from bot.store.grants import GrantStore
from tests.e2e import conftest
from tests.e2e.conftest import Bot, all_text, button_values, sealed
from tests.e2e.test_slack_bad_input import FORM_TYPE, form, sign
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}
HOUR = 3_600_000


@pytest.fixture(autouse=True)
def standing_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The e2e policy with standing approvals of up to 1 h on the medium tier."""
    policy: dict[str, Any] = copy.deepcopy(conftest.POLICY)
    policy["tiers"]["medium"]["standing"] = {"max": "1h", "scope": "requester"}
    monkeypatch.setattr(conftest, "POLICY", policy)


async def open_grant(bot: Bot, rid: str, user: str = "UKID") -> Any:
    ch, ts = await bot.message_of(rid)
    before = bot.emu.open_view(user)  # a dialog a refusal left open is not this click's
    await bot.emu.click(user, ACTION_GRANT, channel=ch, ts=ts)

    async def opened() -> Any:
        view = bot.emu.open_view(user)
        if view is None or (before is not None and view.id == before.id):
            return None
        return view if view.definition["callback_id"] == VIEW_GRANT else None

    return await eventually(opened, what="the grant dialog")


async def grant(
    bot: Bot, rid: str, *, uses: str = "3", amount: str | None = None, scope: str = "requester"
) -> str:
    """Approve `rid` and allow similar calls from the dialog, as UKID: the grant's id."""
    view = await open_grant(bot, rid)
    values: dict[str, Any] = {USES_BLOCK: {USES_ACTION: uses}, SCOPE_BLOCK: {SCOPE_ACTION: scope}}
    if amount is not None:
        values[f"{MAX_BLOCK}0"] = {MAX_ACTION: amount}
    out = await bot.emu.submit("UKID", view.id, values)
    assert out.view_action == "closed", out
    grants = GrantStore(bot.redis, clock=bot.clock)
    held = await eventually(lambda: grants.made_on(rid), what="the grant")
    return held.grant.id


async def card(bot: Bot, rid: str) -> Any:
    ch, ts = await bot.message_of(rid)
    msg = bot.emu.workspace.find_message(ch, ts)
    assert msg is not None
    return msg


async def state_of(bot: Bot, rid: str, want: State) -> Any:
    async def there() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == want else None

    return await eventually(there, what=f"{rid} {want.value}")


def notes(bot: Bot) -> list[str]:
    return [m.text for m in bot.emu.messages("hitl-approvals") if "passed under" in m.text]


async def test_a_grant_passes_a_similar_call_and_gates_one_out_of_bounds(bot: Bot) -> None:
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    shown = await card(bot, first)
    assert "Approve and allow similar for 1 h" in all_text(shown.blocks)
    gid = await grant(bot, first, amount="80")
    req = await state_of(bot, first, State.APPROVED)
    assert req.resolution.actor == "UKID"  # the dialog approved the call itself

    async def card_shows_grant() -> bool:
        text = all_text((await card(bot, first)).blocks)
        return gid in text and ACTION_REVOKE in text

    await eventually(card_shows_grant, what="the grant line on the card")

    second = await bot.propose("refund", {"amount": 75, "to": "cust-1"})
    passed = await state_of(bot, second, State.APPROVED)
    assert passed.resolution.actor == "UKID"
    assert passed.resolution.reason_code == reason_of(gid)
    entry = (await audit.entries(bot.redis, second))[-1]
    assert (entry.actor, entry.reason_code, entry.to_state) == ("UKID", reason_of(gid), "approved")
    await eventually(lambda: notes(bot), what="the grant's note")
    assert gid in notes(bot)[0] and "2 of 3" in notes(bot)[0]

    for args in ({"amount": 81, "to": "cust-1"}, {"amount": 5, "to": "cust-2"}):
        outside = await bot.propose("refund", args)
        await bot.message_of(outside)  # a card, as usual
        assert (await bot.requests.get(outside)).state == State.PENDING_REVIEW
    assert len(notes(bot)) == 1


async def test_over_the_api_a_call_inside_a_grant_is_approved_at_once_and_claimed(
    bot: Bot,
) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        made = await c.post("/v1/approvals", json={"tool": "refund", "args": {"amount": 20}})
        assert made.status_code == 201 and made.json()["state"] == "pending_review"
        gid = await grant(bot, made.json()["id"])
        again = await c.post("/v1/approvals", json={"tool": "refund", "args": {"amount": 20}})
        assert again.status_code == 201, again.text
        body = again.json()
        assert body["state"] == "approved"
        assert body["resolution"]["actor"] == "UKID"
        assert body["resolution"]["reason_code"] == reason_of(gid)
        claimed = await c.post(f"/v1/approvals/{body['id']}/claim")
        assert claimed.status_code == 200 and claimed.json()["state"] == "executing"
        bigger = await c.post("/v1/approvals", json={"tool": "refund", "args": {"amount": 21}})
        assert bigger.json()["state"] == "pending_review"


async def test_an_expired_grant_passes_nothing(bot: Bot) -> None:
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    await grant(bot, first)
    bot.clock.advance(HOUR)  # the tier's max: the grant ends however long was asked
    later = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    await bot.message_of(later)
    assert (await bot.requests.get(later)).state == State.PENDING_REVIEW
    assert notes(bot) == []


async def test_a_revoked_grant_passes_nothing_and_leaves_the_list(bot: Bot) -> None:
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    gid = await grant(bot, first)
    listed = await bot.emu.command("UALICE", "hitl-approvals", "/hitl", "grants")
    assert gid in str(listed)
    ch, ts = await bot.message_of(first)
    await bot.emu.click("UALICE", ACTION_REVOKE, channel=ch, ts=ts)  # any approver of the tier
    grants = GrantStore(bot.redis, clock=bot.clock)

    async def revoked() -> bool:
        return (await grants.get(gid)).revoked_by == "UALICE"

    await eventually(revoked, what="the revocation")
    later = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    await bot.message_of(later)
    assert (await bot.requests.get(later)).state == State.PENDING_REVIEW
    listed = await bot.emu.command("UALICE", "hitl-approvals", "/hitl", "grants")
    assert gid not in str(listed)

    async def card_says_revoked() -> bool:
        text = all_text((await card(bot, first)).blocks)
        return "revoked by" in text and ACTION_REVOKE not in button_values(
            (await card(bot, first)).blocks
        )

    await eventually(card_says_revoked, what="the card saying it was revoked")


async def test_whoever_may_not_approve_the_call_cannot_make_a_grant(bot: Bot) -> None:
    # Asked on UKID's behalf: UKID may not approve it, so may not grant on it either.
    rid = await bot.propose("refund", {"amount": 50, "to": "cust-1"}, on_behalf_of="UKID")
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UKID", ACTION_GRANT, channel=ch, ts=ts)
    await eventually(lambda: bot.emu.ephemerals("UKID"), what="the refusal")
    assert "No grant was made" in str(bot.emu.ephemerals("UKID")[-1])
    assert bot.emu.open_view("UKID") is None

    # The dialog's submission sent anyway (as a modified client could): refused server-side.
    req = await bot.requests.get(rid)
    view = {
        "id": "V1",
        "type": "modal",
        "callback_id": VIEW_GRANT,
        "private_metadata": ButtonValue.encode(rid, req.payload_hash),
        "state": {
            "values": {
                SCOPE_BLOCK: {SCOPE_ACTION: {"selected_option": {"value": "requester"}}},
                "hitl_grant_span": {"span": {"selected_option": {"value": str(HOUR)}}},
                USES_BLOCK: {USES_ACTION: {"value": "5"}},
            }
        },
    }
    submitted = {"id": "UKID", "team_id": "TEMULATOR"}
    body = form({"type": "view_submission", "user": submitted, "view": sealed(view, "UKID")})
    body = body.encode()
    headers = {"Content-Type": FORM_TYPE} | sign(body, str(int(time.time())))
    async with httpx.AsyncClient() as http:
        resp = await http.post(bot.url + "/slack/events", content=body, headers=headers)
    assert resp.status_code == 200 and resp.json()["response_action"] == "errors"
    assert "No grant was made" in str(resp.json()["errors"])
    assert await GrantStore(bot.redis, clock=bot.clock).live() == []
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW


async def test_the_app_home_and_hitl_grants_list_and_revoke_grants(bot: Bot) -> None:
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    gid = await grant(bot, first)
    await bot.emu.open_home("UBOB")  # an approver of the medium tier ("*")

    async def listed() -> Any:
        view = bot.emu.home_view("UBOB")
        return view if view and gid in all_text(view.definition["blocks"]) else None

    home = await eventually(listed, what="the grant on the App Home")
    assert ACTION_REVOKE in all_text(home.definition["blocks"])
    out = await bot.emu.command("UBOB", "hitl-approvals", "/hitl", f"grants revoke {gid}")
    assert f"Revoked standing approval `{gid}`" in str(out)
    again = await bot.emu.command("UKID", "hitl-approvals", "/hitl", f"grants revoke {gid}")
    assert "revoked already" in str(again)
    assert "No standing approval is live" in str(
        await bot.emu.command("UBOB", "hitl-approvals", "/hitl", "grants")
    )


async def _run_with_thread(bot: Bot) -> Any:
    run = await bot.runs.start(
        agent="refunds",
        prompt="refund the duplicates",
        requester="UPARENT",
        channel="#hitl-approvals",
    )

    async def home() -> Any:
        got = await bot.runs.get(run.id)
        return got if got.thread_ts else None

    return await eventually(home, what="the run's thread")


async def test_a_run_grant_passes_that_runs_calls_only_with_a_note_in_its_thread(
    bot: Bot,
) -> None:
    run = await _run_with_thread(bot)
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"}, run_id=run.id)
    gid = await grant(bot, first, scope="run")
    second = await bot.propose("refund", {"amount": 50, "to": "cust-1"}, run_id=run.id)
    await state_of(bot, second, State.APPROVED)

    def in_thread() -> list[str]:
        return [
            m.text for m in bot.emu.replies(run.channel, run.thread_ts) if "passed under" in m.text
        ]

    await eventually(in_thread, what="the note in the run's thread")
    assert gid in in_thread()[0] and second in in_thread()[0]

    other = await _run_with_thread(bot)
    third = await bot.propose("refund", {"amount": 50, "to": "cust-1"}, run_id=other.id)
    await bot.message_of(third)
    assert (await bot.requests.get(third)).state == State.PENDING_REVIEW


async def test_a_grant_written_into_redis_by_hand_passes_nothing_anywhere(bot: Bot) -> None:
    # A real grant, then what a process with store access and no key writes beside it:
    # the same granter, wide bounds, 100 uses, a year, and no seal of serve's.
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    gid = await grant(bot, first)
    grants = GrantStore(bot.redis, clock=bot.clock)
    real = (await grants.get(gid)).grant
    doc = json.loads(real.model_dump_json())
    doc.update(
        id="Gforged",
        seal="",
        uses=100,
        expires_at=bot.clock() + 365 * 24 * HOUR,
        bounds={
            "amount": {"kind": "range", "value": 50, "lo": 0, "hi": 999_999},
            "to": {"kind": "eq", "value": "attacker-acct"},
        },
    )
    record, _, _, live, _ = keys.grant_keys("Gforged")
    await bot.redis.hset(
        record, mapping={"json": json.dumps(doc), "left": 100, "expires_at": doc["expires_at"]}
    )
    await bot.redis.hset(record, mapping={"revoked_by": "", "revoked_at": ""})
    await bot.redis.zadd(live, {"Gforged": doc["expires_at"]})
    # Filed by the notifier's path (a worker's create) and over the HTTP API: both wait
    # for a person, with a card, and nothing is recorded in the granter's name.
    worker = await bot.propose("refund", {"amount": 999, "to": "attacker-acct"})
    await bot.message_of(worker)
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as c:
        made = await c.post(
            "/v1/approvals", json={"tool": "refund", "args": {"amount": 999, "to": "attacker-acct"}}
        )
        assert made.status_code == 201 and made.json()["state"] == "pending_review"
        api = made.json()["id"]
    await bot.message_of(api)
    for rid in (worker, api):
        assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW
        assert all(e.actor != "UKID" for e in await audit.entries(bot.redis, rid))
    assert [e["kind"] for e in await grants.audit(gid)] == ["granted"]


async def test_a_grant_on_a_positive_amount_never_passes_a_negative_one(bot: Bot) -> None:
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    gid = await grant(bot, first)

    async def shows_range() -> bool:  # the grant's range, on the card that made it
        return "from 0 to 50" in all_text((await card(bot, first)).blocks)

    await eventually(shows_range, what="the grant's range on its card")
    for amount in (-1_000_000, -1):
        reversed_ = await bot.propose("refund", {"amount": amount, "to": "cust-1"})
        await bot.message_of(reversed_)
        assert (await bot.requests.get(reversed_)).state == State.PENDING_REVIEW
    inside = await bot.propose("refund", {"amount": 0, "to": "cust-1"})
    passed = await state_of(bot, inside, State.APPROVED)
    assert passed.resolution.reason_code == reason_of(gid)
