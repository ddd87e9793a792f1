"""The approval cards the bot left in an emulated workspace, per request.

For tests and the chaos soak: whatever crashed, each request must end with exactly one
card, and the card of a decided request must show no buttons. It reads the workspace
document (`SlackEmulator.state()` or `GET /_emu/state`), so it serves an emulator in
this process or in another one.

A message is a request's card when its metadata says so. A message without metadata
counts too when it shows a request and is not an escalation post (those open with an
intro block), so a card posted without its tag is never missed in the count.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.slack.blocks.escape import ButtonValue
from bot.slack.delivery.once import Tag

JSON = dict[str, Any]
_FOOT_ID = re.compile(r"Request `([A-Za-z0-9_.-]+)`")


@dataclass(frozen=True)
class Card:
    request_id: str
    channel: str
    ts: str
    live: bool  # still shows the decision buttons


def _messages(state: JSON) -> Iterator[tuple[str, JSON]]:
    for channel in state.get("channels") or []:
        for message in channel.get("messages") or []:
            yield channel["id"], message
            for reply in message.get("replies") or []:
                yield channel["id"], reply


def _block_ids(message: JSON) -> set[str]:
    return {str(b.get("block_id", "")) for b in message.get("blocks") or []}


def _button_request(message: JSON) -> str | None:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or [] if block.get("type") == "actions" else []:
            try:
                return ButtonValue.decode(str(element.get("value", "")))[0]
            except ValueError:
                continue
    return None


def _card_of(message: JSON) -> str | None:
    """The request whose card `message` is, if it is one."""
    tag = Tag.of(message)
    if tag is not None:
        return tag.id if (tag.kind, tag.slot) == ("request", "card") else None
    ids = _block_ids(message)
    if "hitl_foot" not in ids or "hitl_intro" in ids or "hitl_head" not in ids:
        return None
    if (rid := _button_request(message)) is not None:
        return rid
    foot = next(b for b in message.get("blocks") or [] if b.get("block_id") == "hitl_foot")
    found = _FOOT_ID.search(json.dumps(foot, ensure_ascii=False))
    return found.group(1) if found else None


def cards(state: JSON) -> list[Card]:
    """Every approval card in the workspace, thread replies included."""
    out = []
    for channel, message in _messages(state):
        rid = _card_of(message)
        if rid is not None:
            live = "hitl_actions" in _block_ids(message)
            out.append(Card(rid, channel, str(message.get("ts", "")), live))
    return out


def cards_per_request(state: JSON) -> Counter[str]:
    """Request id -> how many cards show it (exactly 1 is right)."""
    return Counter(c.request_id for c in cards(state))


def live_cards_per_request(state: JSON) -> Counter[str]:
    """Request id -> how many of its cards still show buttons (0 once it is decided)."""
    return Counter(c.request_id for c in cards(state) if c.live)
