"""The "Allow similar calls" dialog, and reading what a person submitted, as pure
functions. The bounds come from the approved call (bot/core/grants.py `bounds_of`):
each numeric argument gets a range, two boxes starting at zero and the approved value,
which the person may move as long as the approved value stays inside; every other
argument must stay exactly as approved, and is listed."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.grants import Bound, Scope, bounds_of, scopes, set_range, standing_max
from bot.core.models import ActionRequest
from bot.core.policy import Policy
from bot.slack import escape as esc
from bot.slack.escape import Block, ButtonValue, section
from bot.slack.grants import messages as gmsg
from bot.slack.grants.card import VIEW_GRANT

SCOPE_BLOCK, SCOPE_ACTION = "hitl_grant_scope", "scope"
SPAN_BLOCK, SPAN_ACTION = "hitl_grant_span", "span"
USES_BLOCK, USES_ACTION = "hitl_grant_uses", "uses"
MAX_BLOCK, MAX_ACTION = "hitl_grant_max_", "max"  # + the argument's index (sorted names)
MIN_BLOCK, MIN_ACTION = "hitl_grant_min_", "min"  # the same argument's floor
MAX_USES = 100
DEFAULT_USES = 5
MAX_BOXES = 20  # numeric arguments offered for widening; more keep their approved values
SPANS_MS = (15 * 60_000, 30 * 60_000, 3_600_000, 4 * 3_600_000, 8 * 3_600_000, 86_400_000)
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")  # ASCII digits only: int() reads others


@dataclass(frozen=True)
class Asked:
    """A valid submission: the grant the person asked for."""

    scope: Scope
    span_ms: int
    uses: int
    bounds: dict[str, Bound]


def spans(most: int) -> list[int]:
    return sorted({s for s in SPANS_MS if s < most} | {most})


def numeric(req: ActionRequest) -> list[str]:
    """The arguments the dialog offers to widen, in a fixed order."""
    return sorted(n for n, b in bounds_of(req.args).items() if b.kind == "range")[:MAX_BOXES]


def _select(block_id: str, action_id: str, label: str, opts: Sequence[tuple[str, str]]) -> Block:
    options = [esc.option(text, value) for text, value in opts]
    return {
        "type": "input",
        "block_id": block_id,
        "label": esc.plain(label, esc.INPUT_LABEL),
        "element": {
            "type": "static_select",
            "action_id": action_id,
            "options": options,
            "initial_option": options[0] if block_id == SCOPE_BLOCK else options[-1],
        },
    }


def _box(block_id: str, label: str, initial: str, hint: str | None = None) -> Block:
    block: Block = {
        "type": "input",
        "block_id": block_id,
        "label": esc.plain(label, esc.INPUT_LABEL),
        "element": {
            "type": "plain_text_input",
            "action_id": _action_of(block_id),
            "initial_value": initial,
            "max_length": 40,
        },
    }
    if hint:
        block["hint"] = esc.plain(hint, esc.INPUT_LABEL)
    return block


def _action_of(block_id: str) -> str:
    if block_id.startswith(MAX_BLOCK):
        return MAX_ACTION
    return MIN_ACTION if block_id.startswith(MIN_BLOCK) else USES_ACTION


def _shown(value: object) -> str:
    return esc.code(esc.pretty_json(value, indent=None), 200)


def grant_modal(req: ActionRequest, policy: Policy) -> dict[str, Any]:
    """The dialog for a grant on `req`; its tier must allow one (`offers_grant`)."""
    most = standing_max(policy, req.risk) or 0
    intro = gmsg.MODAL_INTRO.format(
        id=esc.code(req.id), tool=esc.code(req.tool), requester=esc.user(req.requester)
    )
    equal = [
        gmsg.BOUND_EQ.format(name=esc.code(n), value=_shown(b.value))
        for n, b in sorted(bounds_of(req.args).items())
        if b.kind == "eq"
    ]
    eq_text = "\n".join([gmsg.BOUNDS_HEAD, *equal]) if equal else gmsg.BOUNDS_NONE
    blocks: list[Block] = [
        section(intro, block_id="hitl_grant_intro"),
        section(esc.truncate(eq_text, esc.SECTION_TEXT), block_id="hitl_grant_eq"),
    ]
    defaults = bounds_of(req.args)
    for i, name in enumerate(numeric(req)):
        value, shown, bound = req.args[name], esc.truncate(name, 60), defaults[name]
        hint = gmsg.RANGE_HINT.format(value=value)
        blocks += [
            _box(f"{MIN_BLOCK}{i}", gmsg.MIN_LABEL.format(name=shown), str(bound.lo), hint),
            _box(f"{MAX_BLOCK}{i}", gmsg.MAX_LABEL.format(name=shown), str(bound.hi)),
        ]
    scope_opts = [(gmsg.SCOPES[s], s) for s in scopes(policy, req)]
    span_opts = [(esc.duration(s), str(s)) for s in spans(most)]
    blocks += [
        _select(SCOPE_BLOCK, SCOPE_ACTION, gmsg.SCOPE_LABEL, scope_opts),
        _select(SPAN_BLOCK, SPAN_ACTION, gmsg.SPAN_LABEL.format(max=esc.duration(most)), span_opts),
        _box(USES_BLOCK, gmsg.USES_LABEL.format(max=MAX_USES), str(DEFAULT_USES)),
    ]
    return {
        "type": "modal",
        "callback_id": VIEW_GRANT,
        "title": esc.plain(gmsg.MODAL_TITLE, esc.MODAL_TITLE),
        "submit": esc.plain(gmsg.MODAL_SUBMIT, esc.MODAL_TITLE),
        "close": esc.plain("Cancel", esc.MODAL_TITLE),
        "blocks": blocks,
        "private_metadata": ButtonValue.encode(req.id, req.payload_hash),
    }


def _value(values: dict[str, Any], block: str, action: str) -> str:
    entry = (values.get(block) or {}).get(action) or {}
    picked = entry.get("selected_option") or {}
    return str(picked.get("value") or entry.get("value") or "").strip()


def _number(text: str) -> int | float | None:
    if not _NUMBER.match(text):
        return None
    number = int(text) if "." not in text else float(text)
    return number if math.isfinite(number) else None


def read_submission(
    req: ActionRequest, policy: Policy, values: dict[str, Any]
) -> Asked | dict[str, str]:
    """The grant asked for, or the errors to show by block id."""
    errors: dict[str, str] = {}
    scope = _value(values, SCOPE_BLOCK, SCOPE_ACTION)
    allowed = scopes(policy, req)
    if scope not in allowed:
        errors[SCOPE_BLOCK] = gmsg.BAD_SCOPE
    most = standing_max(policy, req.risk) or 0
    span = _value(values, SPAN_BLOCK, SPAN_ACTION)
    if not span.isdigit() or int(span) not in spans(most):
        errors[SPAN_BLOCK] = gmsg.BAD_SPAN
    uses = _value(values, USES_BLOCK, USES_ACTION)
    # isdigit() alone takes '²' and '①', which int() refuses: ASCII digits only.
    if not (uses.isascii() and uses.isdigit()) or not 1 <= int(uses) <= MAX_USES:
        errors[USES_BLOCK] = gmsg.BAD_USES.format(max=MAX_USES)
    bounds = bounds_of(req.args)
    for i, name in enumerate(numeric(req)):
        default = bounds[name]
        lo = _number(_value(values, f"{MIN_BLOCK}{i}", MIN_ACTION) or str(default.lo))
        hi = _number(_value(values, f"{MAX_BLOCK}{i}", MAX_ACTION) or str(default.hi))
        try:
            if lo is None or hi is None:
                raise ValueError(name)
            bounds = set_range(bounds, name, lo, hi)
        except ValueError:
            errors[f"{MAX_BLOCK}{i}"] = gmsg.BAD_RANGE.format(value=req.args[name])
    if errors:
        return errors
    return Asked(scope=scope, span_ms=int(span), uses=int(uses), bounds=bounds)  # type: ignore[arg-type]
