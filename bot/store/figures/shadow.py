"""The shadow policy's side of a create (`HITL_SHADOW_POLICY`): the fields a request
carries for a later replay and for the shadow's verdict, and how /metrics counts the
verdicts.

The fields ride in the request's hash, written by the same CREATE script (one round
trip): a verdict never exists without its request, nor a request made under a shadow
without its verdict. The metrics collector counts each once, from the create event,
in the MULTI that acknowledges it (bot/store/figures/metrics.py).
"""

from __future__ import annotations

from collections import Counter
from typing import cast

from redis.asyncio import Redis

from bot.core.models import ActionRequest, RiskTier
from bot.core.policy import Policy
from bot.core.verdicts import Call, ShadowVerdict, enforced, shadow_verdict
from bot.store import keys

RISK_ASKED = "risk_asked"  # the tier the caller asked for (it may only raise the policy's)
SHADOW = "shadow"  # the shadow policy's verdict, ShadowVerdict.dumps()

DISAGREEMENTS = "hitl_shadow_disagreements_total"
VERDICTS = "hitl_shadow_verdicts_total"
HELP = {
    DISAGREEMENTS: "Creates the shadow policy would have treated otherwise, by tool and kind.",
    VERDICTS: "Creates judged by the shadow policy (HITL_SHADOW_POLICY) as well.",
}


def create_fields(
    shadow: Policy | None, req: ActionRequest, review: bool, risk: RiskTier | None
) -> dict[str, str]:
    """What a new request stores beside its own fields: the caller's raise (so a later
    replay judges the call as it was made) and, under a shadow policy, its verdict
    beside what the real policy gave the request (`req`, `review`: `propose`'s)."""
    out = {RISK_ASKED: risk.value} if risk is not None else {}
    if shadow is not None:
        call = Call(
            tool=req.tool,
            args=req.args,
            requester=req.requester,
            at=req.created_at,
            risk=risk,
            channel=req.channel,
            on_behalf_of=req.on_behalf_of,
        )
        out[SHADOW] = shadow_verdict(enforced(req, review), shadow, call).dumps()
    return out


def _label(value: str) -> str:
    """A Prometheus label value: backslash, quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


async def count(redis: Redis, rid: str, incr: Counter[str]) -> None:
    """Add a new request's shadow verdict, if it has one, to the counters in `incr`."""
    raw, tool = cast(list[str | None], await redis.hmget(keys.request(rid), [SHADOW, "tool"]))
    verdict = ShadowVerdict.loads(raw) if raw else None
    if verdict is None:
        return
    incr[VERDICTS] += 1
    for kind in verdict.differs:
        incr[f'{DISAGREEMENTS}{{kind="{kind}",tool="{_label(tool or "")}"}}'] += 1
