"""Who may decide a request: the one rule, in one place.

The machine applies it to every decision (bot/core/machine.py), and every Slack check
made before a decision (which buttons to offer, whom to tell "not yours") asks it too,
with the person's groups resolved (bot/slack/access/permissions.py). The Lua copy in
scripts/decide.lua is the price of one round trip; tests/store/test_lua_matches_core.py
holds it to this rule, and tests/core/test_deciders.py keeps every other place from
restating it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from bot.core.models import ActionRequest
from bot.core.states import Event


class Verdict(StrEnum):
    MAY = "may"  # among the deciders (or the requester withdrawing their own call)
    OWN = "own"  # the requester, and the tier does not allow self-approval
    NOT_DECIDER = "not_decider"  # named nowhere among the deciders


def who_may_decide(
    req: ActionRequest,
    actor: str,
    groups: Iterable[str] = (),
    *,
    event: Event = Event.APPROVE,
    foreign: bool = False,
) -> Verdict:
    """May `actor` (in `groups`, resolved by the caller) make `event` on `req`?
    `foreign`: from another workspace (Slack Connect): "*" never counts for them."""
    if req.is_requester(actor) and event == Event.REJECT:
        return Verdict.MAY  # saying no to one's own request is always safe: it withdraws it
    if req.is_requester(actor) and not req.self_approval:
        return Verdict.OWN
    allowed = req.eligible()
    anyone = "*" in allowed and not foreign
    if anyone or actor in allowed or allowed.intersection(groups):
        return Verdict.MAY
    return Verdict.NOT_DECIDER
