"""What a policy makes of one call, and where two policies disagree about it.

Both the dry run (`hitl-bot policy diff`) and the shadow policy (`HITL_SHADOW_POLICY`)
judge a call by `propose`, the very evaluation a create makes, so neither can drift
from what the bot enforces. Pure: the caller gives the time the call was made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.core.models import ActionRequest, Level, RiskTier
from bot.core.policy import Policy
from bot.core.proposal import propose
from bot.core.states import State
from bot.errors import Forbidden

# The ways two policies can treat one call differently, in the order they are told.
TIER = "tier"  # another risk tier
REVIEW = "review"  # one sends it to a person, the other lets it run (`review: none`)
REVIEWERS = "reviewers"  # who is told, at some level of the chain
APPROVERS = "approvers"  # who may decide it
QUORUM = "quorum"  # approvals_required
DEFAULT = "default"  # on_exhausted: what happens when nobody answers
TIMEOUT = "timeout"  # how long a level waits before the next (or the default)
CHANNEL = "channel"  # one refuses the channel the caller asked for
KINDS = (TIER, REVIEW, REVIEWERS, APPROVERS, QUORUM, DEFAULT, TIMEOUT, CHANNEL)


@dataclass(frozen=True)
class Call:
    """What a create is judged on: all of it the caller's, none of it the policy's."""

    tool: str
    args: dict[str, Any]
    requester: str
    at: int  # when it was made: on-call rotations resolve as of then
    risk: RiskTier | None = None  # the caller's raise (it never lowers the tier)
    channel: str | None = None
    on_behalf_of: str | None = None


@dataclass(frozen=True)
class Judged:
    """What one policy would have recorded for a call."""

    tier: RiskTier
    review: bool  # False: approved at creation (`review: none`)
    levels: tuple[Level, ...]
    approvers: frozenset[str]
    quorum: int
    default: State
    refused: bool = False  # the caller's channel is not one this tier is reviewed in

    @property
    def chain_ms(self) -> int:
        """From creation to the default: every level's wait, one after the other."""
        return sum(lvl.timeout_ms for lvl in self.levels)


def judge(policy: Policy, call: Call) -> Judged:
    """The terms `policy` gives `call`, as a create would set them. A channel the policy
    would refuse is noted (`refused`) rather than raised: the other terms still tell."""
    refused = False
    try:
        req, review = _propose(policy, call, call.channel)
    except Forbidden:
        req, review = _propose(policy, call, None)
        refused = True
    return Judged(
        tier=req.risk,
        review=review,
        levels=req.levels,
        approvers=frozenset(req.approvers),
        quorum=req.quorum,
        default=req.on_exhausted,
        refused=refused,
    )


def _propose(policy: Policy, call: Call, channel: str | None) -> tuple[ActionRequest, bool]:
    return propose(
        policy,
        request_id="replay",
        tool=call.tool,
        args=call.args,
        requester=call.requester,
        now=call.at,
        on_behalf_of=call.on_behalf_of,
        channel=channel,
        risk=call.risk,
    )


def _people(levels: tuple[Level, ...]) -> list[tuple[object, ...]]:
    return [
        (set(lv.users), set(lv.groups), set(lv.channels), lv.pager_url, lv.pagerduty, lv.opsgenie)
        for lv in levels
    ]


def disagreements(one: Judged, other: Judged) -> tuple[str, ...]:
    """The kinds (KINDS) in which `other` treats the call unlike `one`. The review terms
    are compared only where both send the call to a person: where either lets it run,
    `review` says all there is."""
    found = set()
    if one.tier != other.tier:
        found.add(TIER)
    if one.review != other.review:
        found.add(REVIEW)
    if one.review and other.review:
        if _people(one.levels) != _people(other.levels):
            found.add(REVIEWERS)
        if one.approvers != other.approvers:
            found.add(APPROVERS)
        if one.quorum != other.quorum:
            found.add(QUORUM)
        if one.default != other.default:
            found.add(DEFAULT)
        if [lv.timeout_ms for lv in one.levels] != [lv.timeout_ms for lv in other.levels]:
            found.add(TIMEOUT)
    if one.refused != other.refused:
        found.add(CHANNEL)
    return tuple(k for k in KINDS if k in found)


@dataclass(frozen=True)
class ShadowVerdict:
    """What the shadow policy made of a call the real one decided, as recorded on it."""

    tier: RiskTier
    review: bool
    differs: tuple[str, ...]  # KINDS; empty: the shadow agrees

    def dumps(self) -> str:
        body = {"tier": self.tier.value, "review": self.review, "differs": list(self.differs)}
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def loads(cls, raw: str) -> ShadowVerdict | None:
        """The verdict as recorded; None for a field that is not one (never raises: a
        report reads what is there)."""
        try:
            data = json.loads(raw)
            kinds = tuple(k for k in data["differs"] if k in KINDS)
            return cls(tier=RiskTier(data["tier"]), review=bool(data["review"]), differs=kinds)
        except (ValueError, KeyError, TypeError):
            return None


def enforced(req: ActionRequest, review: bool) -> Judged:
    """What the policy in effect gave a request it just proposed (`propose`'s result):
    read off the request rather than judged again, on a create's path."""
    return Judged(
        tier=req.risk,
        review=review,
        levels=req.levels,
        approvers=frozenset(req.approvers),
        quorum=req.quorum,
        default=req.on_exhausted,
    )


def shadow_verdict(real: Judged, shadow: Policy, call: Call) -> ShadowVerdict:
    """What `shadow` would have done with `call`, and where it differs from `real`, the
    verdict of the policy in effect (`judge` or `enforced`)."""
    theirs = judge(shadow, call)
    return ShadowVerdict(
        tier=theirs.tier, review=theirs.review, differs=disagreements(real, theirs)
    )
