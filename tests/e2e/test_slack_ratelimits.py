"""Slack's rate limits kept, not fought (issue 42): a burst of 200 requests for one review
channel against an emulator that enforces Slack's documented limits.

The limits are Slack's, scaled twenty times faster so the test takes seconds, not minutes:
`chat.postMessage` one message per 0.05 s per channel (Slack: one a second), the tiers
twenty times their per-minute figures, and Retry-After a twentieth of Slack's whole
seconds. The bot's gate is scaled by the same factor, as a bot in front of real Slack
runs with Slack's own figures.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from bot.slack.transport.ratelimit import SLACK_LIMITS
from bot.store import keys
from tests.e2e.conftest import Bot
from tests.support.poll import eventually

SCALE = 20
N = 200
CHANNEL = "#hitl-approvals"


@pytest.fixture
def serve_options() -> dict[str, Any]:
    return {"slack_limits": SLACK_LIMITS.scaled(SCALE)}


def _is_digest(m: Any) -> bool:
    return any(b.get("block_id", "").startswith("hitl_digest") for b in m.blocks or [])


async def _drained(bot: Bot) -> bool:
    """Every event the bot published was delivered to Slack and acknowledged."""
    for stream in (keys.events(s) for s in range(keys.SHARDS)):
        for group in await bot.redis.xinfo_groups(stream):
            if group.get("lag") != 0 or group.get("pending") != 0:
                return False
    return True


async def test_a_burst_of_200_reaches_people_once_and_never_calls_inside_a_wait(
    bot: Bot,
) -> None:
    bot.emu.ratelimits.turn_on(scale=SCALE)
    t0 = time.monotonic()
    rids: list[str] = []
    for start in range(0, N, 25):
        rids += await asyncio.gather(
            *(
                bot.propose("refund", {"amount": 10 + i, "currency": "USD", "to": f"c-{i}"})
                for i in range(start, min(start + 25, N))
            )
        )

    def shown() -> dict[str, int]:
        """How many cards show each request (a digest lists them besides, linking each)."""
        counts = dict.fromkeys(rids, 0)
        for m in bot.emu.messages(CHANNEL):
            if _is_digest(m):
                continue
            text = str(m.blocks)
            for rid in rids:
                if rid in text:
                    counts[rid] += 1
        return counts

    async def everyone_shown() -> bool:
        return all(shown().values())

    await eventually(everyone_shown, what=f"a card for each of {N} requests", timeout_s=90)
    last_card_s = time.monotonic() - t0
    await eventually(lambda: _drained(bot), what="the outbox drained", timeout_s=60)

    twice = {rid: n for rid, n in shown().items() if n != 1}
    assert not twice, f"requests shown on more than one card: {twice}"
    digests = [m for m in bot.emu.messages(CHANNEL) if _is_digest(m)]
    assert len(digests) == 1, "one digest lists the burst"
    inside = bot.emu.ratelimits.inside()
    assert inside == [], (
        f"{len(inside)} calls made inside a Retry-After wait Slack announced "
        f"({bot.emu.ratelimits.limited()} answered 429), first: {inside[:3]}"
    )
    print(
        f"\n{N} requests: last card after {last_card_s:.1f} s (scaled x{SCALE}: "
        f"{last_card_s * SCALE:.0f} s at Slack's pace), "
        f"{bot.emu.ratelimits.limited()} calls answered 429"
    )
