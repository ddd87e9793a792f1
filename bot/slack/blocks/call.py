"""The call a person is asked to approve, as blocks: every argument, as the payload holds it.

The arguments show as their JSON, in the order the caller gave them. A value
too long for the message is cut on its own, with a marker saying how long it
is; it never pushes another argument off the card. When even that does not
fit (thousands of arguments), the names left over are listed, and the
"View full payload" modal has everything.

Numbers in the decision fields are grouped (1,000,000 vs 10,000,000: a missed
zero is what review is for) but never gain digits the payload does not have.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.core.invisible import hidden_in
from bot.core.models import ActionRequest
from bot.slack import messages as msg
from bot.slack.blocks import escape as esc
from bot.slack.blocks.escape import Block, field, section

# Top-level arguments a reviewer decides on, pulled out of the JSON as fields (in this order).
DECISION_KEYS: tuple[str, ...] = ("amount", "currency", "recipient", "to", "cc", "customer")
DECISION_KEYS += ("email", "account", "target", "resource", "path", "environment", "count")

# Of a message's 50 blocks, what the call may take (warning, intro, arguments, cut
# note); the head, details, outcome, buttons and foot need the other 8 at most.
CALL_BLOCKS = 42
_PIECE = esc.SECTION_TEXT - esc.CODE_OVERHEAD  # one section's share of the listing
_NAME_MAX = 200  # an argument's name longer than this is cut too
_VALUE_MIN = 40  # the least of each value a card shows before it lists bare names
_VALUE_MAX = _PIECE - _NAME_MAX - 120  # room left for the indent, the marker and a comma


def decision_fields(args: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, value as text) for the top-level arguments a reviewer decides on."""
    by_lower = {k.lower(): k for k in args if isinstance(k, str)}
    out: list[tuple[str, str]] = []
    for key in DECISION_KEYS:
        if key not in by_lower or (key == "currency" and "amount" in by_lower):
            continue
        text = scalar(args[by_lower[key]])
        currency = args.get(by_lower.get("currency", ""))
        if key == "amount" and isinstance(currency, str):
            text = f"{text} {currency}"
        out.append((by_lower[key], text))
    return out[: esc.SECTION_FIELDS]


def scalar(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int | float):
        return number(v)
    return esc.truncate(esc.pretty_json(v, indent=None), 400)


def number(v: float) -> str:
    """A JSON number with its thousands grouped and no digit added or lost.

    JSON has one number type: 4200 and 4200.0 are the same amount, and a tool
    whose schema says float turns one into the other, so both show as 4,200.
    """
    if isinstance(v, int):
        return f"{v:,}"
    if v.is_integer() and abs(v) < 1e15:  # beyond, a float's integer digits are noise
        return f"{int(v):,}"
    text = repr(v)  # the shortest digits that read back as the same float
    if "e" in text or "n" in text:  # 1e-07, inf, nan: as they are
        return text
    sign, whole, frac = ("-", text[1:], "") if text.startswith("-") else ("", text, "")
    whole, _, frac = whole.partition(".")
    return f"{sign}{int(whole):,}.{frac}"


def hidden_warning(req: ActionRequest) -> list[Block]:
    """A warning block when any text of the request holds a hidden character."""
    res = req.resolution
    texts: list[Any] = [req.tool, req.args, req.requester, req.on_behalf_of, req.run_id]
    texts += [req.original_args]
    texts += [req.channel, req.detail]
    texts += [res.actor, res.reason_code, res.text] if res else []
    texts += [req.approvers, [a.actor for a in req.approvals], req.idempotency_key]
    texts += [(lv.users, lv.groups, lv.channels) for lv in req.levels]
    if not hidden_in(texts):  # walked without recursion: arguments may nest thousands deep
        return []
    return [esc.context(msg.HIDDEN_CHARS_WARNING, block_id="hitl_hidden")]


def call_blocks(req: ActionRequest, *, max_blocks: int = CALL_BLOCKS) -> list[Block]:
    """The exact call: a warning if it hides characters, the tool, the decision fields,
    and every argument as JSON in code; `max_blocks` blocks at most."""
    asked = {} if req.original_args is None else dict(decision_fields(req.original_args))
    fields = [field(esc.mrkdwn(k), _value(v, asked.get(k))) for k, v in decision_fields(req.args)]
    intro = msg.CALL_INTRO.format(tool=esc.inline_code(req.tool, 300))
    head = [*hidden_warning(req), section(intro, fields=fields, block_id="hitl_call")]
    head += edited_note(req)
    return head + args_blocks(req.args, max_blocks - len(head))


def _value(now: str, asked: str | None) -> str:
    shown = esc.inline_code(now, 400)
    if asked is None or asked == now:
        return shown
    return msg.ARG_ASKED.format(now=shown, asked=esc.inline_code(asked, 200))


_MISSING = object()


def edited_note(req: ActionRequest) -> list[Block]:
    """After a person's edit, what the agent asked for in each argument they changed:
    the approver of a later level, and anyone reading the card after, sees both."""
    before = req.original_args
    if before is None or req.candidates:  # a proposal's card lists every candidate
        return []
    items = []
    for key in {**before, **req.args}:
        old = before.get(key, _MISSING)
        if old == req.args.get(key, _MISSING):
            continue
        was = msg.ARG_NOT_GIVEN if old is _MISSING else scalar(old)
        items.append(
            msg.EDITED_ITEM.format(
                name=esc.inline_code(str(key), 100), asked=esc.inline_code(was, 200)
            )
        )
    if not items:
        return []
    text = msg.EDITED_ASKED.format(changes=esc.join_fit(items, 2500))
    return [esc.context(text, block_id="hitl_asked")]


@dataclass
class _Arg:
    name: str  # the key as JSON, escaped for a code block, cut to _NAME_MAX
    value: str  # the value as indented JSON, escaped for a code block
    label: str  # the key for the note under the listing: inline code, escaped
    size: int  # characters of the value's JSON, as the payload holds it
    name_cut: bool

    def line(self, cap: int, last: bool) -> tuple[str, bool]:
        """`"name": value,` with the value cut to `cap` characters; and whether it was."""
        value, cut = self.value, len(self.value) > cap
        if cut:
            value = esc.head(value, cap) + msg.ARG_CUT_MARK.format(size=self.size)
        return f"  {self.name}: {value}{'' if last else ','}", cut or self.name_cut


def _arg(key: Any, value: Any) -> _Arg:
    name_raw = json.dumps(key if isinstance(key, str) else str(key), ensure_ascii=False)
    name = esc.code_text(name_raw)
    value_raw = esc.pretty_json(value)
    name_cut = len(name) > _NAME_MAX
    if name_cut:
        name = esc.head(name, _NAME_MAX) + esc.ELLIPSIS
    return _Arg(
        name=name,
        value=esc.code_text(value_raw.replace("\n", "\n  ")),
        label=esc.inline_code(str(key), 100),
        size=len(value_raw),
        name_cut=name_cut,
    )


def args_blocks(args: dict[str, Any], max_blocks: int) -> list[Block]:
    """The arguments in `max_blocks` blocks at most; every name shows, values are cut alone."""
    if not args:
        return [section(esc.code_block("{}"), block_id="hitl_args")]
    items = [_arg(k, v) for k, v in args.items()]
    room = max(max_blocks - 1, 1)  # one block stays free for the note on what was cut
    best = _listing(items, _VALUE_MAX)
    lo, hi = _VALUE_MIN, _VALUE_MAX  # the largest cap that still fits: values cut alike
    if len(best[0]) > room:
        best = _listing(items, _VALUE_MIN)
        if len(best[0]) > room:
            return _names_only(items, room)
        hi -= 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        got = _listing(items, mid)
        if len(got[0]) <= room:
            lo, best = mid, got
        else:
            hi = mid - 1
    pieces, cut = best
    blocks = [
        section(esc.code_block(p), block_id="hitl_args" if i == 0 else f"hitl_args_{i}")
        for i, p in enumerate(pieces)
    ]
    if cut:
        labels = [msg.ARG_CUT_LABEL.format(name=a.label, size=a.size) for a in cut]
        note = msg.ARGS_CUT_NOTE.format(names=esc.join_fit(labels, 2500), view=msg.BTN_VIEW)
        blocks.append(esc.context(note, block_id="hitl_args_cut"))
    return blocks


def _listing(items: list[_Arg], cap: int) -> tuple[list[str], list[_Arg]]:
    """The JSON listing in section-sized pieces, each value cut to `cap`; what was cut."""
    lines, cut = ["{"], []
    for i, item in enumerate(items):
        line, was_cut = item.line(cap, last=i == len(items) - 1)
        lines.append(line)
        if was_cut:
            cut.append(item)
    lines.append("}")
    return _pack(lines), cut


def _pack(lines: list[str]) -> list[str]:
    pieces: list[str] = []
    for line in lines:
        if pieces and len(pieces[-1]) + 1 + len(line) <= _PIECE:
            pieces[-1] += "\n" + line
        else:
            pieces.append(line)
    return pieces


def _names_only(items: list[_Arg], room: int) -> list[Block]:
    """Too many arguments for any of their values: their names, as many as Slack takes."""
    labels = [msg.ARG_CUT_LABEL.format(name=a.label, size=a.size) for a in items]
    pieces = esc.pack([msg.ARGS_NAMES_ONLY.format(n=len(items), view=msg.BTN_VIEW), *labels])
    if len(pieces) > room:
        shown = sum(p.count("\n") + 1 for p in pieces[: room - 1]) - 1
        pieces = [*pieces[: room - 1], msg.AND_MORE.format(n=len(items) - shown)]
    return [
        section(p, block_id="hitl_args" if i == 0 else f"hitl_args_{i}")
        for i, p in enumerate(pieces)
    ]


# -- calls that ran without review, one line each in the run's thread ----------------

CALL_CHARS = 160


def compact_call(tool: str, args: dict[str, Any]) -> str:
    """`move_claw(direction="left", steps=2)`: the call on one line, values as JSON."""
    parts = [f"{k}={esc.pretty_json(v, indent=None)}" for k, v in args.items()]
    return f"{tool}({', '.join(parts)})"


def free_item(req: ActionRequest) -> str:
    call = esc.inline_code(compact_call(req.tool, req.args), CALL_CHARS)
    return msg.SL_FREE_ITEM.format(call=call, risk=req.risk.value)


def free_line(items: list[str]) -> str:
    if len(items) == 1:
        return esc.truncate(msg.SL_NO_REVIEW.format(item=items[0]), esc.MESSAGE_TEXT)
    head = msg.SL_NO_REVIEW_MANY.format(n=len(items))
    return esc.truncate("\n".join([head, *(f"• {i}" for i in items)]), esc.MESSAGE_TEXT)
