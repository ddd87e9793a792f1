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
from bot.slack.blocks import escape as esc
from bot.slack.blocks.escape import Block, ButtonValue, section
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
# ASCII digits only (`\d` takes every script's), and short enough for `int` to take:
# a box holds 40 characters, and a signed payload may send 3,000
_NUMBER = re.compile(r"-?[0-9]{1,40}(\.[0-9]{1,40})?")
_WHOLE = re.compile(r"[0-9]{1,12}")


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
    """What the person typed or picked; "" for anything but text (a signed payload may
    put a list or an object where Slack puts a string)."""
    found = values.get(block) if isinstance(values, dict) else None
    entry = found.get(action) if isinstance(found, dict) else None
    entry = entry if isinstance(entry, dict) else {}
    picked = entry.get("selected_option")
    text = picked.get("value") if isinstance(picked, dict) else entry.get("value")
    return text.strip() if isinstance(text, str) else ""


def _whole(text: str, most: int) -> int | None:
    """`text` as a whole number from 1 to `most` written in ASCII digits, else None:
    `str.isdigit` also takes "²" and "①", which `int` refuses."""
    if not _WHOLE.fullmatch(text):
        return None
    number = int(text)
    return number if 1 <= number <= most else None


def _number(text: str) -> int | float | None:
    if not _NUMBER.fullmatch(text):
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
    span = _whole(_value(values, SPAN_BLOCK, SPAN_ACTION), max(spans(most)))
    if span is None or span not in spans(most):
        errors[SPAN_BLOCK] = gmsg.BAD_SPAN
    uses = _whole(_value(values, USES_BLOCK, USES_ACTION), MAX_USES)
    if uses is None:
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
    if errors or span is None or uses is None:  # neither is None without an error
        return errors
    return Asked(scope=scope, span_ms=span, uses=uses, bounds=bounds)  # type: ignore[arg-type]
