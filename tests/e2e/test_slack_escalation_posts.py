"""No stale buttons anywhere: every message that shows a request (the reviewer card,
each escalation DM, each escalation channel post) ends showing its outcome."""

from __future__ import annotations

from typing import Any

from bot.core.states import State
from bot.slack import messages as m
from bot.slack.blocks import render
from tests.e2e.conftest import Bot, all_text, button_values
from tests.support.poll import eventually

ESCALATION_CHANNEL = "#hitl-oncall"  # level 2 of the e2e policy: UPARENT and this channel


def _showing(bot: Bot, rid: str) -> list[Any]:
    """Every top-level message, in any channel or DM, that shows request `rid`."""
    found = []
    for ch in bot.emu.state()["channels"]:
        for msg in bot.emu.messages(ch["id"]):
            if rid in all_text(msg.blocks):
                found.append(msg)
    return found


def _dms(msgs: list[Any]) -> list[Any]:
    return [x for x in msgs if x.channel.startswith("D")]


def _oncall(bot: Bot, msgs: list[Any]) -> list[Any]:
    channel = bot.emu.workspace.find_channel(ESCALATION_CHANNEL)
    assert channel is not None
    return [x for x in msgs if x.channel == channel.id]


async def _escalated(bot: Bot, rid: str) -> tuple[Any, Any]:
    """Wait for the escalation DM to UPARENT and the post in the escalation channel."""

    async def both() -> tuple[Any, Any] | None:
        msgs = _showing(bot, rid)
        dms, oncall = _dms(msgs), _oncall(bot, msgs)
        return (dms[0], oncall[0]) if dms and oncall else None

    return await eventually(both)


async def _state(bot: Bot, rid: str, want: State) -> None:
    async def probe() -> bool:
        return (await bot.requests.get(rid)).state == want

    await eventually(probe)


def _settled(bot: Bot, rid: str, outcome: str) -> Any:
    """A probe: every message showing `rid` has no buttons and shows `outcome`."""

    async def probe() -> list[Any] | None:
        msgs = _showing(bot, rid)
        done = all(not button_values(x.blocks) and outcome in all_text(x.blocks) for x in msgs)
        return msgs if done else None

    return probe


async def test_every_escalation_message_shows_the_outcome_without_buttons(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    ch, ts = await bot.message_of(rid)
    bot.clock.advance(10 * 60_000)  # the review timeout passes: level 2 is told
    dm, post = await _escalated(bot, rid)
    for msg in (dm, post):  # while pending, the escalation is a live request
        assert render.ACTION_APPROVE in button_values(msg.blocks)

    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=dm.channel, ts=dm.ts)
    await _state(bot, rid, State.APPROVED)

    approved = m.RESOLUTION["approve"].split(" {who}")[0]  # "✅ Approved by"
    msgs = await eventually(_settled(bot, rid, approved))
    assert {(x.channel, x.ts) for x in msgs} == {
        (ch, ts),
        (dm.channel, dm.ts),
        (post.channel, post.ts),
    }
    for msg in msgs:
        assert "UPARENT" in all_text(msg.blocks)  # who decided
        assert m.HEAD_ESCALATED.split(":")[0] not in all_text(msg.blocks)  # no "⏫ Escalated"


async def test_failed_slack_updates_are_retried_and_never_post_twice(bot: Bot) -> None:
    rid = await bot.propose("drop_claw", {"target": "bear"})
    await bot.message_of(rid)
    # Slack refuses every chat.update from now on: the escalation notice posts the DM and
    # the channel message, then fails on an update and stays in the outbox.
    fault = bot.emu.add_fault(500, 1_000, method="chat.update")
    bot.clock.advance(10 * 60_000)
    dm, _ = await _escalated(bot, rid)

    async def retried() -> bool:
        # The client tries 3 times per call; a 4th failed call is the outbox's retry.
        return fault.remaining <= 1_000 - 4

    await eventually(retried)
    msgs = _showing(bot, rid)
    assert len(_dms(msgs)) == 1 and len(_oncall(bot, msgs)) == 1, "a retry posted again"

    bot.clock.advance(10 * 60_000)  # the last level passes too: the policy default
    await _state(bot, rid, State.AUTO_REJECTED)
    # Slack still refuses updates, so the DM keeps its buttons for now; a click on them
    # is refused and says what happened (the store, not the message, is the authority).
    assert button_values(next(x for x in _showing(bot, rid) if x.ts == dm.ts).blocks)
    await bot.emu.click("UPARENT", render.ACTION_APPROVE, channel=dm.channel, ts=dm.ts)

    async def told() -> list[str]:
        return [e.text for e in bot.emu.ephemerals("UPARENT")]

    texts = await eventually(told)
    assert any("auto" in t.lower() and "reject" in t.lower() for t in texts), texts

    bot.emu.faults.clear()  # Slack recovers: the outbox brings every message up to date
    msgs = await eventually(_settled(bot, rid, m.STATE_LABELS["auto_rejected"]))
    assert len(msgs) == 3  # the card, the DM, the channel post: each once
