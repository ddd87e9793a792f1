"""The digest card as pure functions: the rows a drawing shows, its view hash, its blocks.

A drawing shows at most `MAX_ROWS` calls, and its buttons act on exactly those: the
view hash covers each one's id, version and payload hash, and is what the audit of
every decision taken from it records as what the person saw.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from bot.core.models import ActionRequest, RiskTier
from bot.slack import messages as smsg
from bot.slack.batch import messages as bm
from bot.slack.blocks import escape as esc
from bot.slack.blocks import messages as vmsg
from bot.slack.blocks.render import (
    Rendered,
)
from bot.slack.blocks.views import reason_inputs

ACTION_APPROVE_ALL = "hitl_digest_approve"
ACTION_REJECT_ALL = "hitl_digest_reject"
VIEW_REJECT_ALL = "hitl_digest_reject_modal"
MIN_BATCH = 3  # fewer waiting: no digest
MAX_ROWS = 20  # shown (and decided) per drawing; the rest wait for the next one
ROW_ARGS = 12  # arguments a row lists; a call with more gets no "Approve all"
NAME_CHARS = 40  # per argument name on a row (cut visibly, and named in the confirm)
VALUE_CHARS = 40  # per argument value on a row (cut visibly, and named in the confirm)
CUT_ITEM_CHARS = 48  # a row's cut names in the confirm; longer: how many, not which
AMOUNT_KEYS = ("amount", "total", "sum", "value")
LINK = re.compile(r"https?://[^\s<>|]{1,500}")


@dataclass(frozen=True)
class Shown:
    """One call as a drawing showed it."""

    id: str
    version: int
    payload_hash: str
    link: str

    def row(self) -> list[Any]:
        return [self.id, self.version, self.payload_hash, self.link]

    @staticmethod
    def of(row: Sequence[Any]) -> Shown:
        return Shown(str(row[0]), int(row[1]), str(row[2]), str(row[3]))


def view_hash(shown: Sequence[Shown]) -> str:
    """sha256 over the (id, version, payload hash) of every call shown, in order."""
    items = [[s.id, s.version, s.payload_hash] for s in shown]
    raw = json.dumps(items, separators=(",", ":"))
    return hashlib.sha256(f"hitl-digest:{raw}".encode()).hexdigest()


class DigestValue:
    """`group:view_hash:check` on the digest's buttons and in its modal."""

    _GROUP = re.compile(r"[0-9a-f]{24}")
    _HASH = re.compile(r"[0-9a-f]{64}")

    @staticmethod
    def _check(group: str, vh: str) -> str:
        return hashlib.sha256(f"hitl-digest:{group}:{vh}".encode()).hexdigest()[:10]

    @classmethod
    def encode(cls, group: str, vh: str) -> str:
        return f"{group}:{vh}:{cls._check(group, vh)}"

    @classmethod
    def decode(cls, value: str) -> tuple[str, str]:
        parts = value.split(":") if isinstance(value, str) else []
        if (
            len(parts) != 3
            or not cls._GROUP.fullmatch(parts[0])
            or not cls._HASH.fullmatch(parts[1])
        ):
            raise ValueError("not a digest button value")
        if not hmac.compare_digest(parts[2], cls._check(parts[0], parts[1])):
            raise ValueError("the digest button value was altered")
        return parts[0], parts[1]


def no_batch(reqs: Sequence[ActionRequest]) -> str | None:
    """Why these calls may not be decided together (None: they may)."""
    if any(r.risk == RiskTier.CRITICAL for r in reqs):
        return bm.NO_BATCH_CRITICAL
    quorum = max((r.quorum for r in reqs), default=1)
    if quorum > 1:
        return bm.NO_BATCH_QUORUM.format(n=quorum)
    if any(r.original_hash for r in reqs):
        return bm.NO_BATCH_EDITED
    return None


def unbatchable(req: ActionRequest) -> str | None:
    """Why this one call is left out of a batch decision (None: it may be in one)."""
    if req.risk == RiskTier.CRITICAL:
        return bm.WHY_CRITICAL
    if req.quorum > 1:
        return bm.WHY_QUORUM.format(n=req.quorum)
    if req.original_hash:
        return bm.WHY_EDITED
    return None


def _amount(args: dict[str, Any]) -> Decimal | None:
    for key in AMOUNT_KEYS:
        v = args.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            try:
                d = Decimal(str(v))
            except InvalidOperation:
                return None
            return d if d.is_finite() else None
    return None


def total(reqs: Sequence[ActionRequest]) -> tuple[Decimal, str] | None:
    """The calls' amounts summed, when every one has an amount and all the same currency."""
    amounts = [_amount(r.args) for r in reqs]
    currencies = {r.args.get("currency") for r in reqs}
    if not reqs or any(a is None for a in amounts) or len(currencies) != 1:
        return None
    (currency,) = currencies
    if not isinstance(currency, str) or not currency:
        return None
    return sum((a for a in amounts if a is not None), Decimal(0)), currency


def _link(s: Shown, n: int) -> str:
    label = f"#{n} {s.id}"
    return f"<{s.link}|{label}>" if LINK.fullmatch(s.link) else f"{label} {bm.NO_LINK}"


def row_text(req: ActionRequest, s: Shown, n: int) -> str:
    """One call: a link to its card, then every argument (escaped, values cut visibly),
    in the agent's order; past `ROW_ARGS` the row says how many it does not show."""
    parts = [
        f"{esc.inline_code(str(k), NAME_CHARS)} {esc.inline_code(_value(v), VALUE_CHARS)}"
        for k, v in list(req.args.items())[:ROW_ARGS]
    ]
    if hidden(req):
        parts.append(bm.ROW_HIDDEN_ARGS.format(n=len(req.args) - ROW_ARGS))
    return f"• {_link(s, n)}  " + " · ".join(parts)


def hidden(req: ActionRequest) -> bool:
    """Whether the call's row leaves arguments out (it may then not be approved in bulk)."""
    return len(req.args) > ROW_ARGS


def _cut(text: str, limit: int) -> bool:
    """Whether `esc.inline_code(text, limit)` shortens it (it keeps `limit - 2` chars)."""
    return len(text) > max(limit - 2, 1)


def cut_args(req: ActionRequest) -> list[str]:
    """The arguments whose name or value the row shows cut short."""
    return [
        str(k)
        for k, v in list(req.args.items())[:ROW_ARGS]
        if _cut(str(k), NAME_CHARS) or _cut(_value(v), VALUE_CHARS)
    ]


def _value(v: Any) -> str:
    return v if isinstance(v, str) else esc.pretty_json(v, indent=None)


def digest_message(
    reqs: Sequence[ActionRequest], links: dict[str, str], group: str, *, waiting: int = 0
) -> tuple[Rendered, list[Shown]]:
    """The card for `reqs` (waiting, oldest first; `waiting`: how many wait in all, when
    `reqs` is only the oldest of them) and the calls it shows."""
    first = reqs[0]
    waiting = max(waiting, len(reqs))
    shown_reqs = list(reqs[:MAX_ROWS])
    shown = [Shown(r.id, r.version, r.payload_hash, links.get(r.id, "")) for r in shown_reqs]
    tool, who = esc.code(first.tool, 80), esc.code(first.requester, 80)
    n = len(shown)
    summed = total(shown_reqs)
    if summed is None:
        head = bm.HEAD.format(n=n, tool=tool, requester=who)
    else:
        amount, currency = summed
        head = bm.HEAD_TOTAL.format(
            n=n, tool=tool, requester=who, total=f"{amount:,}", currency=esc.fit(currency, 12)
        )
    blocks: list[esc.Block] = [esc.section(head, block_id="hitl_digest_head")]
    rows = [row_text(r, s, i) for i, (r, s) in enumerate(zip(shown_reqs, shown, strict=True), 1)]
    for i, text in enumerate(esc.pack(rows)):
        blocks.append(esc.section(text, block_id=f"hitl_digest_rows_{i}"))
    if waiting > n:
        blocks.append(esc.context(bm.MORE.format(n=waiting - n)))
    why = no_batch(shown_reqs)
    if why is None:
        value = DigestValue.encode(group, view_hash(shown))
        hiding = [i for i, r in enumerate(shown_reqs, 1) if hidden(r)]
        blocks.append(esc.context(esc.mrkdwn(bm.HOW_IT_WORKS)))
        if hiding:
            rows_text = ", ".join(f"#{i}" for i in hiding)
            note = bm.NO_APPROVE_ALL_HIDDEN.format(rows=esc.fit(rows_text, 400), n=ROW_ARGS)
            blocks.append(esc.context(esc.mrkdwn(note), block_id="hitl_digest_no_approve_all"))
        cut = _cut_note(shown_reqs, n, first.tool)
        buttons = _buttons(n, first.tool, value, cut, approve=not hiding)
        blocks.append(esc.actions(buttons, block_id="hitl_digest_actions"))
    else:
        blocks.append(esc.context(esc.mrkdwn(why), block_id="hitl_digest_no_batch"))
    fallback = bm.FALLBACK.format(
        n=n, tool=esc.fit(first.tool, 80), requester=esc.fit(first.requester, 80)
    )
    return Rendered(fallback, esc.cap(blocks, esc.MESSAGE_BLOCKS, smsg.BLOCKS_CUT)), shown


def _short(name: str) -> str:
    return name if len(name) <= 30 else name[:29] + "…"


def _cut_item(n: int, names: list[str]) -> str:
    named = bm.CUT_ITEM.format(n=n, names=", ".join(_short(k) for k in names))
    return named if len(named) <= CUT_ITEM_CHARS else bm.CUT_ITEM_MANY.format(n=n, k=len(names))


def _cut_note(reqs: Sequence[ActionRequest], n: int, tool: str) -> str:
    """What the confirm says the rows cut short, row by row ("" when nothing is)."""
    items = [_cut_item(i, names) for i, r in enumerate(reqs, 1) if (names := cut_args(r))]
    if not items:
        return ""
    # The dialog holds CONFIRM_TEXT characters: the items get what the sentences leave.
    room = esc.CONFIRM_TEXT - len(bm.CONFIRM_TEXT.format(n=n, tool=tool))
    room -= len(bm.CONFIRM_CUT.format(items=""))
    return bm.CONFIRM_CUT.format(items=esc.join_fit(items, max(room, 20), "; "))


def _buttons(n: int, tool: str, value: str, cut: str, *, approve: bool) -> list[esc.Block]:
    reject = esc.button(bm.REJECT_ALL.format(n=n), ACTION_REJECT_ALL, value, style="danger")
    if not approve:
        return [reject]
    confirm = esc.confirm(
        bm.CONFIRM_TITLE.format(n=n),
        bm.CONFIRM_TEXT.format(n=n, tool=tool) + cut,
        bm.CONFIRM_OK,
        bm.CONFIRM_DENY,
    )
    return [
        esc.button(
            bm.APPROVE_ALL.format(n=n), ACTION_APPROVE_ALL, value, style="primary", confirm=confirm
        ),
        reject,
    ]


def closed_message(tool: str, requester: str) -> Rendered:
    """What a digest shows once fewer than three of its calls wait."""
    text = bm.CLOSED.format(tool=esc.code(tool, 80), requester=esc.code(requester, 80))
    return Rendered(
        esc.mrkdwn(bm.CLOSED.format(tool=tool, requester=requester)),
        [esc.context(text, block_id="hitl_digest_closed")],
    )


def reject_modal(value: str, n: int, tool: str, requester: str) -> dict[str, Any]:
    """One reason for every call of the drawing `value` names."""
    intro = bm.REJECT_INTRO.format(n=n, tool=esc.code(tool, 80), requester=esc.code(requester, 80))
    return {
        "type": "modal",
        "callback_id": VIEW_REJECT_ALL,
        "title": esc.plain(bm.REJECT_TITLE, esc.MODAL_TITLE),
        "submit": esc.plain(bm.REJECT_SUBMIT, esc.MODAL_TITLE),
        "close": esc.plain(vmsg.MODAL_CANCEL, esc.MODAL_TITLE),
        "private_metadata": value,
        "blocks": [
            esc.section(intro, block_id="hitl_digest_reject_intro"),
            *reason_inputs(),
        ],
    }
