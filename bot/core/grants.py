"""Standing approvals: what a grant is, and whether a later call falls inside one.

Pure: the store keeps grants and their use counts (bot/store/grants.py); this module
only decides. A grant is made by a person approving one call; its bounds come from
that call's arguments. Every argument must be present again: numbers between zero and
the approved value (or inside the range the person set), everything else exactly equal.
An argument the approved call did not have, or one missing, puts a call outside the
bounds: a grant never covers what nobody saw.

A grant is a record any process that can write the store could forge, so `serve` signs
every field that decides what it passes (`grant_bytes`), and nothing is passed under a
grant whose signature, or whose source approval by its granter, does not check out
(`grant_problem`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.core.models import ActionRequest, RiskTier
from bot.core.policy import Policy
from bot.core.proof.seal import Verify, b64, seal_valid, unb64
from bot.core.states import Event

GRANT_REASON = "grant:"  # the reason code of an approval under a grant: "grant:G..."
GRANT_DOMAIN = "hitl-grant/1"  # changes whenever the signed bytes do
EXACT = 2**53  # beyond it a JSON number is not carried exactly: never a bound's number

Scope = Literal["run", "requester"]


class Bound(BaseModel):
    """One argument's bound: `eq` the value itself, `range` a number from `lo` to `hi`
    (both included). `value` is always the approved one, which a range contains."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["eq", "range"]
    value: Any
    lo: int | float | None = None
    hi: int | float | None = None


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
    seal: str = ""  # serve's signature of grant_bytes: KEY_ID.SIGNATURE ("": none, passes nothing)


def is_number(value: object) -> bool:
    """A JSON number carried exactly: finite, and an integer within ±2^53. A bigger one is
    no number to a bound (it falls outside every range), never an error."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -EXACT <= value <= EXACT
    return isinstance(value, float) and math.isfinite(value) and -EXACT <= value <= EXACT


def _same(a: object, b: object) -> bool:
    # Canonical JSON: key order does not decide, a type does ("1" is not 1, true is not 1).
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _range_of(value: int | float) -> Bound:
    # Between zero and the approved value: a grant made on a refund of 50 never passes
    # one of -50, which would move the money the other way.
    return Bound(kind="range", value=value, lo=min(0, value), hi=max(0, value))


def bounds_of(args: dict[str, Any]) -> dict[str, Bound]:
    """The bounds a grant takes from an approved call: numbers a range from zero to the
    approved value, every other value (ids, names, text, lists, objects) must be equal."""
    return {
        name: _range_of(v) if is_number(v) else Bound(kind="eq", value=v)
        for name, v in args.items()
    }


def crosses_zero(bound: Bound) -> bool:
    return bound.kind == "range" and (bound.lo or 0) < 0 < (bound.hi or 0)


def set_range(bounds: dict[str, Bound], name: str, lo: object, hi: object) -> dict[str, Bound]:
    """`bounds` with the range of `name` set to `lo`..`hi`, as a person typed it. ValueError
    for an argument without a range, a value that is no exact number, or a range that
    leaves out the approved value (a grant always covers the call it was made on). A
    range across zero is the person's explicit choice: the default never crosses it."""
    bound = bounds.get(name)
    if bound is None or bound.kind != "range":
        raise ValueError(f"{name} has no numeric range")
    for v in (lo, hi):
        if not is_number(v):
            raise ValueError(f"{name}: {v!r} is not a number")
    assert isinstance(lo, int | float) and isinstance(hi, int | float)
    if not lo <= bound.value <= hi:
        raise ValueError(f"{name}: {lo}..{hi} leaves out the approved {bound.value}")
    return {**bounds, name: Bound(kind="range", value=bound.value, lo=lo, hi=hi)}


def within(bounds: dict[str, Bound], args: dict[str, Any]) -> bool:
    """Does a call's `args` fall inside `bounds`? Never raises, whatever `args` hold."""
    if set(args) != set(bounds):
        return False
    for name, bound in bounds.items():
        value = args[name]
        if bound.kind == "eq":
            if not _same(value, bound.value):
                return False
        elif not _in_range(bound, value):
            return False
    return True


def _in_range(bound: Bound, value: object) -> bool:
    if not is_number(value) or bound.lo is None or bound.hi is None:
        return False
    assert isinstance(value, int | float)
    return bound.lo <= value <= bound.hi


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


def grant_bytes(grant: Grant, key_id: str) -> bytes:
    """The canonical bytes serve signs for `grant`: every field but the seal, so none of
    what decides what it passes (tool, tier, scope, requester, owner, on_behalf_of, run,
    bounds, uses, granter and their groups, times, source) can change unseen."""
    fields = grant.model_dump(mode="json", exclude={"seal"})
    doc = [GRANT_DOMAIN, key_id, fields]
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def encode_grant_seal(key_id: str, signature: bytes) -> str:
    return f"{key_id}.{b64(signature)}"


def grant_signed(grant: Grant, verify: Verify) -> bool:
    key_id, _, sig = grant.seal.partition(".")
    if not key_id or not sig:
        return False
    try:
        raw = unb64(sig)
    except ValueError:
        return False
    return verify(key_id, grant_bytes(grant, key_id), raw)


def source_approved(grant: Grant, lines: Sequence[str], verify: Verify) -> bool:
    """Does the source request's history hold its approval by the granter, sealed by
    serve? A grant is made only after that approval (bot/slack/grants/handlers.py)."""
    for line in lines:
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(e, dict) or e.get("kind") != "transition":
            continue
        if e.get("event") != Event.APPROVE.value or e.get("actor") != grant.granted_by:
            continue
        if grant_of(str(e.get("reason_code") or "")):
            continue  # an approval made under another grant is no person's
        if seal_valid(
            e.get("seal"),
            verify,
            request_id=grant.source,
            event=Event.APPROVE.value,
            actor=grant.granted_by,
            payload_hash=str(e.get("payload_hash") or ""),
            at=int(e.get("at") or 0),
            to_state=str(e.get("to") or ""),
            version=int(e.get("version") or 0),
        ):
            return True
    return False


def grant_problem(grant: Grant, source_lines: Sequence[str], verify: Verify) -> str | None:
    """Why nothing may pass under `grant`, or None: its seal must be serve's, and its
    source request must have been approved by its granter."""
    if not grant_signed(grant, verify):
        why = "unsigned" if not grant.seal else "not signed by this bot's key"
        return f"grant {grant.id} is {why}"
    if not source_approved(grant, source_lines, verify):
        return (
            f"grant {grant.id}: its source {grant.source} holds no approval by {grant.granted_by}"
        )
    return None
