"""What a person meets when a modal cannot do what they asked, through the Slack emulator.

Edit and approve is refused on the click to whoever may not approve (before they fill
in a form), with the same ephemeral and audit entry as a refused submit; and a refusal
inside a modal is plain text that names people, with no Slack markup and no name cut
in half.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest

from bot.core.policy import parse_policy
from bot.core.states import State
from bot.slack.blocks import render
from bot.slack.blocks.modal_errors import MODAL_ERROR_MAX
from bot.store import audit, keys
from tests.e2e import conftest
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

MARKUP = re.compile(r"<[@!#]|\{date|\^")


@pytest.fixture(autouse=True)
def operators(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The kid is an operator here: one who may see every request, and so open its
    modals, but may still not approve what was asked for them."""
    policy = copy.deepcopy(conftest.POLICY)
    policy["operators"] = ["UKID"]
    monkeypatch.setattr(conftest, "POLICY", policy)
    yield


async def _ephemeral(bot: Bot, user: str, words: str) -> Any:
    async def told() -> Any:
        found = [e for e in bot.emu.ephemerals(user) if words in e.text]
        return found[-1] if found else None

    return await eventually(told, what=f"an ephemeral to {user} saying {words!r}")


async def _modal(bot: Bot, user: str, callback_id: str) -> Any:
    async def opened() -> Any:
        view = bot.emu.open_view(user)
        return view if view and view.definition["callback_id"] == callback_id else None

    return await eventually(opened, what=f"{user}'s {callback_id}")


async def test_edit_is_refused_on_the_click_to_an_operator_it_was_asked_for(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 900, "to": "cust-1"}, on_behalf_of="UKID")
    ch, ts = await bot.message_of(rid)
    before = await bot.requests.get(rid)

    await bot.emu.click("UKID", render.ACTION_EDIT, channel=ch, ts=ts)
    refusal = await _ephemeral(bot, "UKID", "may not decide")
    assert refusal.text.startswith("🚫 <@UKID> may not decide")
    assert "nobody approves their own action" in refusal.text
    assert bot.emu.open_view("UKID") is None  # no form to fill in for nothing

    # The same refusal a submit gets, audited the same way; the request did not move.
    trail = await audit.entries(bot.redis, rid)
    refused = [e for e in trail if e.kind == "refused"]
    assert [(e.actor, e.event, e.reason_code) for e in refused] == [
        ("UKID", "edit_and_approve", "not_eligible")
    ]
    after = await bot.requests.get(rid)
    assert (after.state, after.version, after.payload_hash) == (
        State.PENDING_REVIEW,
        before.version,
        before.payload_hash,
    )

    # Whoever may decide still gets the form.
    await bot.emu.click("UBOB", render.ACTION_EDIT, channel=ch, ts=ts)
    await _modal(bot, "UBOB", render.VIEW_EDIT)


async def test_an_approver_refused_their_own_call_is_told_why_not_told_they_may(
    bot: Bot,
) -> None:
    """Alice is in @approvers, who may decide a high refund; asked for her, her click is
    refused because it is hers, and the refusal must not read as if she were not one."""
    rid = await bot.propose("refund", {"amount": 4200, "to": "cust-1"}, on_behalf_of="UALICE")
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)
    refusal = await _ephemeral(bot, "UALICE", "may not decide")
    assert "nobody approves their own action, not even one of its approvers" in refusal.text
    assert "it needs someone else of: <!subteam^SAPPROVERS>" in refusal.text, refusal.text
    assert "who may decide" not in refusal.text
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW


async def test_a_refusal_in_the_reject_modal_names_people_in_plain_text(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 5000, "to": "cust-1"})  # high: carol may not
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UCAROL", render.ACTION_REJECT, channel=ch, ts=ts)
    view = await _modal(bot, "UCAROL", render.VIEW_REJECT)
    out = await bot.emu.submit(
        "UCAROL", view.id, {render.REASON_BLOCK: {render.REASON_ACTION: "too_risky"}}
    )
    assert out.view_action == "errors", out
    error = out.errors[render.REASON_BLOCK]
    assert not MARKUP.search(error), error
    # Kid by the name Slack shows; the group by its id, as the emulator lists no groups.
    assert error == "You are not among those who may decide this: SAPPROVERS, Kid."
    assert (await bot.requests.get(rid)).state == State.PENDING_REVIEW


async def test_a_long_list_of_deciders_is_cut_between_names(bot: Bot) -> None:
    people = {f"UTEAM{i}": f"Team {i}" for i in range(5)}
    people |= {"UALICE": "Alice Approver", "UBOB": "Bob Oncall", "UPARENT": "Parent"}
    people |= {f"UFORMER{i}": f"UFORMER{i}" for i in range(9)}  # not in Slack: by id
    policy = copy.deepcopy(conftest.POLICY)
    policy["tiers"]["high"]["approvers"] = sorted(people)
    made = await bot.requests.create(
        parse_policy(policy), tool="refund", args={"amount": 5000}, requester="agent:test"
    )
    ch, ts = await bot.message_of(made.request.id)
    await bot.emu.click("UKID", render.ACTION_REJECT, channel=ch, ts=ts)
    view = await _modal(bot, "UKID", render.VIEW_REJECT)
    out = await bot.emu.submit(
        "UKID", view.id, {render.REASON_BLOCK: {render.REASON_ACTION: "too_risky"}}
    )
    error = out.errors[render.REASON_BLOCK]
    assert len(error) <= MODAL_ERROR_MAX and not MARKUP.search(error), error
    assert error.startswith("You are not among those who may decide this: "), error
    shown = error.removeprefix("You are not among those who may decide this: ")
    *named, rest = shown.split(", ")
    more = re.fullmatch(r"and (\d+) more\.", rest)
    assert more is not None, error  # whole names dropped, and counted
    assert named and set(named) <= set(people.values()), error  # none cut in half
    assert len(named) + int(more.group(1)) == len(people)


async def test_an_edit_decided_meanwhile_says_who_and_when_in_plain_text(bot: Bot) -> None:
    rid = await bot.propose("refund", {"amount": 900, "to": "cust-1"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UALICE", render.ACTION_EDIT, channel=ch, ts=ts)
    view = await _modal(bot, "UALICE", render.VIEW_EDIT)
    # Alice submits before the bot's update of her modal reaches her (a race the bot
    # cannot close): as if the bot never knew her modal was open.
    await eventually(lambda: bot.redis.exists(keys.open_views(rid)), what="her modal known")
    await bot.redis.delete(keys.open_views(rid))
    await bot.emu.click("UBOB", render.ACTION_APPROVE, channel=ch, ts=ts)

    async def approved() -> Any:
        req = await bot.requests.get(rid)
        return req if req.state == State.APPROVED else None

    req = await eventually(approved)
    assert req.resolution is not None
    out = await bot.emu.submit(
        "UALICE", view.id, {render.ARGS_BLOCK: {render.ARGS_ACTION: '{"amount": 90, "to": "x"}'}}
    )
    assert out.view_action == "errors", out
    error = out.errors[render.ARGS_BLOCK]
    assert re.fullmatch(
        r"Already approved by Bob Oncall \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); nothing changed\.",
        error,
    ), error


async def test_a_modal_left_open_on_a_request_decided_meanwhile_says_so(bot: Bot) -> None:
    """Slack keeps a modal open until its person closes it: Bob's Edit modal, open while
    Alice approved, must not go on offering to decide the settled call."""
    rid = await bot.propose("drop_claw", {"target": "bear"})
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UBOB", render.ACTION_EDIT, channel=ch, ts=ts)
    opened = await eventually(lambda: bot.emu.open_view("UBOB"), what="Bob's Edit modal")
    assert opened.definition.get("submit")  # it can approve, for now

    await bot.emu.click("UALICE", render.ACTION_APPROVE, channel=ch, ts=ts)

    def settled() -> Any:
        view = bot.emu.open_view("UBOB")
        return view if view is not None and not view.definition.get("submit") else None

    view = await eventually(settled, what="Bob's modal turned into a notice")
    assert view.id == opened.id  # the same modal, updated in place
    text = str(view.definition["blocks"])
    assert "no longer waiting for review" in text and "Approved" in text
    assert (await bot.requests.get(rid)).state == State.APPROVED
