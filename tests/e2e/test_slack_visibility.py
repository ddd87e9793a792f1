"""Who sees a request in Slack: `/hitl pending`, the App Home and the View button show it
only to the people who may decide it and to the policy's operators."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from bot.slack.blocks import render
from tests.e2e import conftest
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

OPERATOR = "UTEAM0"  # in no approver group, named only as an operator


@pytest.fixture(autouse=True)
def operators(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The e2e policy with an operator (set before the `bot` fixture writes it)."""
    policy = copy.deepcopy(conftest.POLICY)
    policy["operators"] = [OPERATOR]
    monkeypatch.setattr(conftest, "POLICY", policy)
    yield


async def _high(bot: Bot) -> str:
    # above 1000 a refund is high risk: SAPPROVERS (alice, bob) and UKID decide it
    return await bot.propose("refund", {"amount": 4200, "to": "SECRET-IBAN-77"})


def _said(out: Any) -> str:
    return json.dumps(out.body) if out.body is not None else ""


async def test_pending_lists_a_request_only_to_its_deciders_and_the_operators(bot: Bot) -> None:
    rid = await _high(bot)
    shown = {u: _said(await bot.emu.command(u, "#general", "/hitl", "pending")) for u in
             ("UCAROL", "UALICE", OPERATOR)}  # fmt: skip
    assert rid not in shown["UCAROL"]  # carol is in no group that may decide it
    assert rid in shown["UALICE"]  # a member of SAPPROVERS, looked up in Slack
    assert rid in shown[OPERATOR]


async def test_app_home_lists_a_request_only_to_its_deciders_and_the_operators(
    bot: Bot,
) -> None:
    rid = await _high(bot)
    for user, sees in (("UCAROL", False), ("UBOB", True), (OPERATOR, True)):
        await bot.emu.open_home(user)

        async def home(user: str = user) -> Any:
            return bot.emu.home_view(user)

        view = await eventually(home)
        assert (rid in json.dumps(view.definition)) is sees, user


async def test_view_opens_the_full_arguments_only_to_deciders_and_operators(bot: Bot) -> None:
    rid = await _high(bot)
    ch, ts = await bot.message_of(rid)
    await bot.emu.click("UCAROL", render.ACTION_VIEW, channel=ch, ts=ts)

    async def refused() -> bool:
        return any("full arguments" in e.text for e in bot.emu.ephemerals("UCAROL"))

    await eventually(refused)
    assert bot.emu.open_view("UCAROL") is None
    await bot.emu.click("UCAROL", render.ACTION_EDIT, channel=ch, ts=ts)  # Edit shows them too
    await eventually(lambda: _count(bot, "UCAROL", 2))
    assert bot.emu.open_view("UCAROL") is None
    for user in ("UALICE", OPERATOR):
        await bot.emu.click(user, render.ACTION_VIEW, channel=ch, ts=ts)

        async def modal(user: str = user) -> Any:
            return bot.emu.open_view(user)

        view = await eventually(modal)
        assert "SECRET-IBAN-77" in json.dumps(view.definition)


async def _count(bot: Bot, user: str, n: int) -> bool:
    return len([e for e in bot.emu.ephemerals(user) if "full arguments" in e.text]) >= n
