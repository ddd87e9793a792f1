"""Approval fatigue told to the operators, through the real bot and the Slack emulator:
an approver deciding faster than the card can be read, one person carrying a tier, a
tier's requests ending without a person more than last week: each is one direct
message to each operator, once a day, and never a word in a channel. A healthy week
tells nobody anything."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.core.models import Decision
from bot.core.policy import parse_policy
from bot.core.states import Event, State
from bot.store.figures.fatigue_told import FatigueTold
from bot.store.requests import RequestStore
from tests.e2e.conftest import POLICY, Bot
from tests.support.keys import serve_signer
from tests.support.poll import eventually

OPERATOR = "UCAROL"
MARK = "Approval fatigue"
DAY = 86_400_000


@pytest.fixture(autouse=True)
def operators(monkeypatch: pytest.MonkeyPatch) -> None:
    """Carol is the policy's only operator (set before the bot reads the policy)."""
    monkeypatch.setitem(POLICY, "operators", [OPERATOR])


@pytest.fixture
def serve_env() -> dict[str, Any]:
    return {"hitl_fatigue_check_s": 0.05, "hitl_fatigue_fast_window": 10}


class Desk:
    """Requests made and decided as serve would record them, on the bot's clock."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.store = RequestStore(bot.redis, clock=bot.clock, signer=serve_signer())
        self.policy = parse_policy(POLICY)

    async def decide(self, tool: str, args: dict[str, Any], actor: str, read_ms: int) -> str:
        """One request, approved by `actor` `read_ms` after its card showed (0: at once)."""
        made = await self.store.create(self.policy, tool=tool, args=args, requester="agent:t")
        req = made.request
        if read_ms:
            await self.bot.message_of(req.id)  # the card is up: the reading starts now
            self.bot.clock.advance(read_ms)
        await self.store.transition(
            req.id,
            Decision(
                event=Event.APPROVE,
                actor=actor,
                actor_groups=("#hitl-approvals",),
                payload_hash=req.payload_hash,
            ),
        )
        return req.id


def told(bot: Bot) -> list[tuple[str, tuple[str, ...], str]]:
    """Every fatigue message posted anywhere: its conversation kind, members, and what
    it says (text and blocks)."""
    return [
        (ch.kind, tuple(sorted(ch.members)), m.text + json.dumps(m.blocks))
        for ch in bot.emu.workspace.channels.values()
        for m in ch.top_level()
        if MARK in m.text or MARK in json.dumps(m.blocks)
    ]


async def _a_check_after_now(bot: Bot) -> None:
    """Wait for a whole check that started after this moment (on the bot's clock)."""
    bot.clock.advance(1000)
    after = bot.clock()
    marks = FatigueTold(bot.redis)

    async def checked() -> bool:
        last = await marks.last_checked()
        return last is not None and last >= after

    await eventually(checked, what="a fatigue check after now")


async def test_a_healthy_week_tells_nobody(bot: Bot) -> None:
    desk = Desk(bot)
    for i in range(30):  # three people, turn about, each reading the card 30 s
        await desk.decide("refund", {"amount": i + 1}, ("UALICE", "UBOB", "UKID")[i % 3], 30_000)
    await _a_check_after_now(bot)
    assert told(bot) == []


async def three_signals(bot: Bot) -> None:
    """A fortnight that calls for each signal once: Alice too fast, the Kid carrying
    high, medium's requests left to time out."""
    desk = Desk(bot)
    # Low: Alice approves the moment each card shows, Bob reads his; turn about, so
    # neither carries the tier.
    for i in range(10):
        await desk.decide("post_note", {"n": i}, "UALICE", 0)
        await desk.decide("post_note", {"n": 100 + i}, "UBOB", 20_000)
    # High: the Kid takes every refund over 1,000, reading each.
    for i in range(10):
        await desk.decide("refund", {"amount": 2000 + i}, "UKID", 20_000)
    # Medium: five refunds nobody answers, none the week before.
    left = [await desk.bot.propose("refund", {"amount": 10 + i}) for i in range(5)]
    for rid in left:
        await bot.message_of(rid)
    bot.clock.advance(11 * 60_000)  # past the reviewers' 10 minutes: escalated
    for rid in left:
        await eventually(lambda rid=rid: _level(bot, rid, 1), what=f"{rid} escalated")
    bot.clock.advance(11 * 60_000)  # past the escalation's: the default
    for rid in left:
        await eventually(lambda rid=rid: _state(bot, rid, State.AUTO_REJECTED), what=rid)


async def test_each_signal_reaches_the_operator_once_a_day(bot: Bot) -> None:
    await three_signals(bot)
    dm = ("im", tuple(sorted([OPERATOR, bot.emu.workspace.bot.id])))
    want = [
        "<@UALICE> decided 10 of their last 10 requests faster than the card can be read",
        "<@UKID> took 10 of the 10 decisions people made on high requests",
        "5 medium requests ended without a person in the last 7 days",
    ]

    async def all_three() -> bool:
        return len(told(bot)) >= 3

    await eventually(all_three, what="three fatigue messages")
    await _a_check_after_now(bot)
    got = told(bot)
    assert len(got) == 3, got  # one per signal, none twice
    assert all((kind, members) == dm for kind, members, _ in got)  # to the operator only
    for text in want:
        assert sum(text in t for *_, t in got) == 1, text
    assert all("What to do" in t and "hitl-bot policy suggest" in t for *_, t in got)

    # The same day: nothing again, however many checks run.
    bot.clock.advance(3_600_000)
    await _a_check_after_now(bot)
    assert len(told(bot)) == 3

    # The next day, what still holds is told once more.
    bot.clock.advance(DAY)

    async def six() -> bool:
        return len(told(bot)) >= 6

    await eventually(six, what="the next day's messages")
    await _a_check_after_now(bot)
    assert len(told(bot)) == 6


async def _level(bot: Bot, rid: str, level: int) -> bool:
    return (await bot.requests.get(rid)).level == level


async def _state(bot: Bot, rid: str, state: State) -> bool:
    return (await bot.requests.get(rid)).state == state
