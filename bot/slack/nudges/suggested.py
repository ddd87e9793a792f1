"""Policy suggestions mined for the operators' App Home: serve's fatigue check
(teller.py) calls `refresh` each time it runs, and at most once an hour, across every
`serve`, one of them reads the last 30 days of requests (bot/store/figures/history.py),
mines them against the policy it runs (bot/core/suggestions/mining.py, the rules
`hitl-bot policy suggest` uses) and keeps a compact summary
(bot/store/figures/suggested.py). The App Home only reads that summary: mining a month
on every open would keep Slack waiting. Nothing is applied here.
"""

from __future__ import annotations

import asyncio
import logging

from bot.core.hindsight.policydiff import Recorded
from bot.core.policy import Policy
from bot.core.suggestions.mining import mine
from bot.core.suggestions.summary import WINDOW_MS, Summary, summarize
from bot.errors import HitlError
from bot.gate.runtime import Runtime
from bot.store.figures.history import history
from bot.store.figures.suggested import Suggested

log = logging.getLogger(__name__)


def _mined(policy: Policy, found: list[Recorded], now_ms: int, since_ms: int) -> Summary:
    made, _ = mine(policy, found)
    return summarize(made, len(found), now_ms, since_ms)


async def refresh(rt: Runtime, now_ms: int) -> Summary | None:
    """Mine the last 30 days and keep the summary, if nobody did in this hour; the
    summary kept, or None when another check had the hour or the mining failed."""
    kept = Suggested(rt.requests.redis)
    if not await kept.claim(now_ms):
        return None
    since = now_ms - WINDOW_MS
    try:
        found = await history(rt.requests, since, now_ms)
        # Pure CPU over a month of requests: off the event loop, which answers Slack.
        summary = await asyncio.to_thread(_mined, rt.policy, found, now_ms, since)
    except (HitlError, ValueError) as exc:  # a damaged request record
        await kept.give_back(now_ms)  # the next check tries again
        log.warning("policy suggestions not mined: %s", exc)
        return None
    await kept.save(summary)
    return summary
