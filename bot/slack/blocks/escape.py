"""Untrusted text made safe, and small enough, for Slack.

Slack reads `<...>` in mrkdwn as links, mentions and broadcasts (`<!channel>`)
and `&` as the start of an entity; escaping those three characters is all the
escaping Slack has (`mrkdwn`). Everything an agent or a person wrote goes
through it before it reaches a mrkdwn field. The only `<...>` left in what we
send are the ones built here from checked ids (`user`, `principal`, `date`).

Slack refuses a whole message when one part breaks a limit, so the block
builders at the bottom cut text to fit by construction; the limits are the
constants below. Lengths count Python characters, as `slack_sdk` does.

Hidden characters (bidi controls, zero-width and other format or control
characters) change what a person reads without changing what runs: `mrkdwn`,
`code_text` and `plain` spell them as escapes (`invisible.visible`).

The other way across the same boundary, `ButtonValue` checks what a click sends
back before anything trusts it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from typing import Any

from bot.core.invisible import visible
from bot.core.text import ELLIPSIS as ELLIPSIS
from bot.core.text import head as head
from bot.core.text import iso as iso
from bot.core.text import truncate as truncate
from bot.slack import messages as msg

Block = dict[str, Any]

SECTION_TEXT = 3000  # a section's text; also our cap for a context element
FIELD_TEXT = 2000  # one section field
SECTION_FIELDS = 10  # fields per section
HEADER_TEXT = 150  # a header block's plain_text
BUTTON_TEXT = 75
BUTTON_VALUE = 2000
OPTION_TEXT = 75
OPTION_VALUE = 150
CONFIRM_TITLE = 100
CONFIRM_TEXT = 300
CONFIRM_BUTTON = 30
MODAL_TITLE = 24  # a modal's title, submit and close texts
INPUT_LABEL = 2000
INPUT_MAX = 3000  # plain_text_input max_length, so also the most its initial_value may hold
PLACEHOLDER = 150
CONTEXT_ELEMENTS = 10
PRIVATE_METADATA = 3000
MESSAGE_BLOCKS = 50  # blocks in one message
VIEW_BLOCKS = 100  # blocks in a modal or the App Home
MESSAGE_TEXT = 3000  # our cap for a notification's fallback text (Slack cuts at 40,000)
CODE_OVERHEAD = 8  # the two ``` fences plus a guard character at each end

ZWSP = "\u200b"  # zero-width space: breaks a run of backticks without showing

_OPEN_TAG = re.compile(r"<[^<>]*$")
_TICK_RUN = re.compile(r"`(?=`)")
_USER = re.compile(r"[UW][A-Z0-9]{2,}")
_GROUP = re.compile(r"S[A-Z0-9]{2,}")
_CHANNEL = re.compile(r"[CG][A-Z0-9]{2,}")


# -- text --------------------------------------------------------------------------


def mrkdwn(text: str) -> str:
    """`text` with `&`, `<` and `>` escaped and hidden characters spelled out, so any
    mrkdwn field shows it literally and in the order it was written."""
    return _entities(visible(text))


def _entities(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fit(text: str, limit: int, marker: str = ELLIPSIS) -> str:
    """Escape `text` for mrkdwn, then cut it to `limit` characters."""
    return truncate(mrkdwn(text), limit, marker)


def chunks(text: str, size: int) -> list[str]:
    """Escaped `text` in pieces of at most `size` characters that join back into `text`.

    A piece ends after a newline when there is one in its second half, and never
    inside an entity.
    """
    if size < 8:
        raise ValueError("chunks of fewer than 8 characters could not hold an entity")
    out: list[str] = []
    rest = text
    while len(rest) > size:
        piece = head(rest, size)
        newline = piece.rfind("\n")
        if newline >= size // 2:
            piece = piece[: newline + 1]
        out.append(piece)
        rest = rest[len(piece) :]
    out.append(rest)
    return out


def code_text(raw: str) -> str:
    """Raw text escaped for a ``` block, its backtick runs broken so they cannot close it.

    Hidden characters are spelled out first, so the zero-width spaces added here stay."""
    return _entities(_TICK_RUN.sub("`" + ZWSP, visible(raw)))


def code_block(piece: str) -> str:
    """A piece of `code_text` output as a ``` block (adds `CODE_OVERHEAD` characters at most)."""
    if piece.startswith("`") or not piece:
        piece = ZWSP + piece
    if piece.endswith("`"):
        piece += ZWSP
    return f"```{piece}```"


def inline_code(raw: str, limit: int) -> str:
    """A one-line value in `inline code`, `limit` characters at most.

    Inline code cannot hold a backtick or a line break, so those show as look-alikes
    (a modifier grave accent and ↵); the exact value is always in the arguments' code block.
    """
    if not raw:
        return "_" + msg.EMPTY_VALUE + "_"
    flat = raw.replace("`", "\u02cb").replace("\r\n", "↵").replace("\n", "↵").replace("\r", "↵")
    return "`" + fit(flat, max(limit - 2, 1)) + "`"


def join_fit(items: Sequence[str], limit: int, sep: str = ", ") -> str:
    """Items joined while they fit in `limit` characters, then "and N more"."""
    full = sep.join(items)
    if len(full) <= limit:
        return full
    reserve = len(sep) + len(msg.AND_MORE.format(n=len(items)))
    kept: list[str] = []
    used = 0
    for item in items:
        add = len(item) + (len(sep) if kept else 0)
        if used + add + reserve > limit:
            break
        kept.append(item)
        used += add
    return truncate(sep.join([*kept, msg.AND_MORE.format(n=len(items) - len(kept))]), limit)


def code(raw: str | None, limit: int = 200) -> str:
    """An id or name in inline code; an em dash when there is none."""
    return inline_code(raw, limit) if raw else "—"


def pretty_json(value: Any, *, indent: int | None = 2) -> str:
    """JSON a person reads: keys in the order the caller gave them, unicode as is (hidden
    characters are spelled out later, by `code_text` or `mrkdwn`); never raises."""
    seps = (", ", ": ") if indent is None else None
    try:
        return json.dumps(value, indent=indent, separators=seps, ensure_ascii=False, default=repr)
    except (TypeError, RecursionError, ValueError):
        return msg.ARGS_UNREADABLE


def pack(lines: Sequence[str], limit: int = SECTION_TEXT) -> list[str]:
    """Lines grouped into texts of at most `limit` characters (a longer line is cut)."""
    out: list[str] = []
    for line in (truncate(x, limit) for x in lines):
        if out and len(out[-1]) + 1 + len(line) <= limit:
            out[-1] += "\n" + line
        else:
            out.append(line)
    return out


class ButtonValue:
    """`request_id:payload_hash:check`. The check catches a corrupted or hand-edited value;
    the authority is still the store, which refuses a hash that is not the current one."""

    _ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
    _HASH = re.compile(r"[0-9a-f]{64}")

    @staticmethod
    def _check(request_id: str, payload_hash: str) -> str:
        return hashlib.sha256(f"hitl-button:{request_id}:{payload_hash}".encode()).hexdigest()[:10]

    @classmethod
    def encode(cls, request_id: str, payload_hash: str) -> str:
        if not cls._ID.fullmatch(request_id) or not cls._HASH.fullmatch(payload_hash):
            raise ValueError("a button binds a plain request id to a full sha256 payload hash")
        return f"{request_id}:{payload_hash}:{cls._check(request_id, payload_hash)}"

    @classmethod
    def decode(cls, value: str) -> tuple[str, str]:
        parts = value.split(":") if isinstance(value, str) else []
        if len(parts) != 3 or not cls._ID.fullmatch(parts[0]) or not cls._HASH.fullmatch(parts[1]):
            raise ValueError("not a hitl button value")
        if not hmac.compare_digest(parts[2], cls._check(parts[0], parts[1])):
            raise ValueError("the button value was altered")
        return parts[0], parts[1]


# -- people, places and times ----------------------------------------------------------


def user(name: str) -> str:
    """A mention when `name` is a Slack user id, else the name as literal text."""
    return f"<@{name}>" if _USER.fullmatch(name) else mrkdwn(name)


def principal(name: str) -> str:
    """A user, user group (`S…`) or channel id as a mention or link; anything else literal."""
    if _USER.fullmatch(name):
        return f"<@{name}>"
    if _GROUP.fullmatch(name):
        return f"<!subteam^{name}>"
    if _CHANNEL.fullmatch(name):
        return f"<#{name}>"
    if name == "*":
        return msg.ANYONE_ELIGIBLE
    return mrkdwn(name)


TO_THE_SECOND = "{date_short_pretty} at {time_secs}"  # Slack's tokens, not ours to fill


def date(ms: int, fmt: str = "{date_short_pretty} at {time}") -> str:
    """A time each reader sees in their own time zone, with an ISO UTC fallback."""
    return f"<!date^{ms // 1000}^{fmt}|{iso(ms)}>"


def duration(ms: int) -> str:
    """A span a person reads at a glance: 90 s, 15 min, 4 h, 1 h 30 min, 2 d."""
    s = abs(ms) // 1000
    if s < 60:
        return f"{s} s"
    m = s // 60
    if m < 60:
        return f"{m} min"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h} h {m} min" if m else f"{h} h"
    d, h = divmod(h, 24)
    return f"{d} d {h} h" if h else f"{d} d"


# -- blocks that fit by construction ---------------------------------------------------


def plain(text: str, limit: int = SECTION_TEXT) -> Block:
    """A plain_text object: Slack parses no markup in it, so it needs no escaping but
    the spelling out of hidden characters."""
    text = visible(text)
    shown = truncate(text, limit) if text.strip() else "-"
    return {"type": "plain_text", "text": shown, "emoji": True}


def md(text: str, limit: int = SECTION_TEXT) -> Block:
    """A mrkdwn object from already-escaped text; a last-resort cut never splits a `<…>`."""
    if len(text) > limit:
        cut = head(text, limit - len(ELLIPSIS))
        m = _OPEN_TAG.search(cut)
        text = (cut[: m.start()] if m else cut) + ELLIPSIS
    return {"type": "mrkdwn", "text": text if text.strip() else "-"}


def header(text: str, block_id: str | None = None) -> Block:
    return _with_id({"type": "header", "text": plain(text, HEADER_TEXT)}, block_id)


def section(
    text: str,
    *,
    fields: Sequence[str] = (),
    accessory: Block | None = None,
    block_id: str | None = None,
) -> Block:
    block: Block = {"type": "section", "text": md(text)}
    if fields:
        block["fields"] = [md(f, FIELD_TEXT) for f in fields[:SECTION_FIELDS]]
    if accessory is not None:
        block["accessory"] = accessory
    return _with_id(block, block_id)


def field(label: str, value: str) -> str:
    """A section field: a bold label over its (already escaped) value."""
    return f"*{label}*\n{value}"


def text_sections(raw: str, max_blocks: int, block_id: str) -> list[Block]:
    """Raw text, escaped, across up to `max_blocks` sections; the last says if some was cut."""
    more = "\n_" + msg.TEXT_CUT + "_"
    parts = chunks(mrkdwn(raw), SECTION_TEXT - len(more))
    if len(parts) > max_blocks:
        parts = parts[:max_blocks]
        parts[-1] += more
    return [section(p, block_id=f"{block_id}_{i}") for i, p in enumerate(parts)]


def context(*texts: str, block_id: str | None = None) -> Block:
    elements = [md(t) for t in texts[:CONTEXT_ELEMENTS]]
    return _with_id({"type": "context", "elements": elements}, block_id)


def divider() -> Block:
    return {"type": "divider"}


def actions(elements: Sequence[Block], block_id: str | None = None) -> Block:
    return _with_id({"type": "actions", "elements": list(elements)}, block_id)


def button(
    text: str,
    action_id: str,
    value: str,
    *,
    style: str | None = None,
    confirm: Block | None = None,
) -> Block:
    if len(value) > BUTTON_VALUE:
        raise ValueError(f"a button value holds {BUTTON_VALUE} characters, got {len(value)}")
    b: Block = {
        "type": "button",
        "text": plain(text, BUTTON_TEXT),
        "action_id": action_id,
        "value": value,
    }
    if style:
        b["style"] = style
    if confirm:
        b["confirm"] = confirm
    return b


def confirm(title: str, text: str, ok: str, deny: str) -> Block:
    """A confirmation dialog; every part is plain_text, so nothing in it is parsed."""
    return {
        "title": plain(title, CONFIRM_TITLE),
        "text": plain(text, CONFIRM_TEXT),
        "confirm": plain(ok, CONFIRM_BUTTON),
        "deny": plain(deny, CONFIRM_BUTTON),
    }


def option(text: str, value: str) -> Block:
    return {"text": plain(text, OPTION_TEXT), "value": value[:OPTION_VALUE]}


def cap(blocks: list[Block], limit: int, note: str) -> list[Block]:
    """At most `limit` blocks; when some are cut, the last one says so (`note`, escaped)."""
    if len(blocks) <= limit:
        return blocks
    return [*blocks[: limit - 1], context(mrkdwn(note))]


def _with_id(block: Block, block_id: str | None) -> Block:
    if block_id:
        block["block_id"] = block_id[:255]
    return block
