"""Standing approvals: what a grant is, and whether a later call falls inside one.

Pure: the store keeps grants and their use counts (bot/store/grants.py); this module
only decides. A grant is made by a person approving one call; its bounds come from
that call's arguments. Every argument must be present again: numbers at most the
approved value (or the value the person widened it to), everything else exactly equal.
An argument the approved call did not have, or one missing, puts a call outside the
bounds: a grant never covers what nobody saw.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.core.models import ActionRequest, RiskTier
from bot.core.policy import Policy

GRANT_REASON = "grant:"  # the reason code of an approval under a grant: "grant:G..."

Scope = Literal["run", "requester"]


class Bound(BaseModel):
    """One argument's bound: `eq` the value itself, `max` a number not exceeded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["eq", "max"]
    value: Any


class Grant(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    tool: str
    risk: RiskTier
    scope: Scope
    requester: str
    owner: str
    on_behalf_of: str | None = None
    run_id: str | None = None  # the run it covers (scope run); None for scope requester
    bounds: dict[str, Bound]
    uses: int  # granted; the store counts what is left
    granted_by: str
    granter_groups: tuple[str, ...] = ()  # the groups that made the granter eligible
    created_at: int
    expires_at: int
    source: str  # the request whose approval made it
    channel: str | None = None


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _same(a: object, b: object) -> bool:
    # Canonical JSON: key order does not decide, a type does ("1" is not 1, true is not 1).
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def bounds_of(args: dict[str, Any]) -> dict[str, Bound]:
    """The bounds a grant takes from an approved call: numbers become ceilings, every
    other value (ids, names, text, lists, objects) must be equal."""
    return {name: Bound(kind="max" if is_number(v) else "eq", value=v) for name, v in args.items()}


def widen(bounds: dict[str, Bound], name: str, value: object) -> dict[str, Bound]:
    """`bounds` with the ceiling of `name` raised to `value`. ValueError for an argument
    without a ceiling, a value that is no number, or one below the approved value (a
    narrower bound is the person's to set too, but never below the call they approved)."""
    bound = bounds.get(name)
    if bound is None or bound.kind != "max":
        raise ValueError(f"{name} has no numeric bound to widen")
    if not is_number(value):
        raise ValueError(f"{name}: {value!r} is not a number")
    if value < bound.value:
        raise ValueError(f"{name}: {value} is below the approved {bound.value}")
    return {**bounds, name: Bound(kind="max", value=value)}


def within(bounds: dict[str, Bound], args: dict[str, Any]) -> bool:
    """Does a call's `args` fall inside `bounds`?"""
    if set(args) != set(bounds):
        return False
    for name, bound in bounds.items():
        value = args[name]
        if bound.kind == "eq":
            if not _same(value, bound.value):
                return False
        elif not (is_number(value) and value <= bound.value):
            return False
    return True


def covers(grant: Grant, req: ActionRequest) -> bool:
    """Is `req` the same tool, tier and requester, in the grant's scope and bounds?
    Liveness (expiry, uses, revocation) is the store's to check with the use."""
    if req.candidates:  # a proposal waits for a person to choose among its calls
        return False
    if (grant.tool, grant.risk, grant.owner) != (req.tool, req.risk, req.owner):
        return False
    if grant.requester != req.requester or grant.on_behalf_of != req.on_behalf_of:
        return False
    if grant.scope == "run" and (grant.run_id is None or grant.run_id != req.run_id):
        return False
    return within(grant.bounds, req.args)


def standing_max(policy: Policy, risk: RiskTier) -> int | None:
    """The longest grant the tier allows (ms), or None: no standing approvals there."""
    tp = policy.tiers[risk]
    if tp.standing is None or risk == RiskTier.CRITICAL or tp.approvals_required > 1:
        return None
    return tp.standing.max


def scopes(policy: Policy, req: ActionRequest) -> tuple[Scope, ...]:
    """The scopes a grant made on `req` may take: none where the tier allows none; a run
    scope only for a call made in a run."""
    tp = policy.tiers[req.risk]
    if standing_max(policy, req.risk) is None or tp.standing is None:
        return ()
    out: list[Scope] = ["run"] if req.run_id else []
    if tp.standing.scope == "requester":
        out.append("requester")
    return tuple(out)


def expiry(now: int, asked_ms: int, max_ms: int) -> int:
    """When a grant asked for `asked_ms` ends: never later than the tier's max."""
    return now + max(1, min(asked_ms, max_ms))


def reason_of(grant_id: str) -> str:
    return f"{GRANT_REASON}{grant_id}"


def grant_of(reason_code: str | None) -> str | None:
    """The grant an approval was made under, from its reason code."""
    if reason_code and reason_code.startswith(GRANT_REASON):
        return reason_code.removeprefix(GRANT_REASON)
    return None
