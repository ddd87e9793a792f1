"""Reading a thread reply as a decision: "approve", "lgtm", "reject: wrong order".

Pure: the Slack listener (bot.slack.listeners.replies) finds the request and applies the
decision through the same path as the buttons. Ambiguity is never a decision: an
approve word must be the whole reply, so "yes, but to the penguin" is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.models import clip
from bot.core.policy import ReplyWords
from bot.core.states import Event, ReasonCode

_CODES = {c.value for c in ReasonCode}


@dataclass(frozen=True)
class ReplyDecision:
    event: Event
    reason_code: str | None = None
    text: str | None = None


def read_reply(
    text: str, words: ReplyWords, *, bot_user: str | None = None
) -> ReplyDecision | None:
    """The decision a reply states, or None when it is not one."""
    if bot_user:  # "@hitl-bot approve" is "approve"
        text = re.sub(rf"<@{re.escape(bot_user)}(\|[^>]*)?>", "", text)
    said = " ".join(text.split())
    low = said.lower()
    if low in words.approve:
        return ReplyDecision(Event.APPROVE)
    for word in words.reject:
        if low == word:
            return ReplyDecision(Event.REJECT, ReasonCode.OTHER.value)
        rest = said[len(word) :].lstrip() if low.startswith(word) else ""
        if rest.startswith(":"):
            reason = rest[1:].strip()
            first = reason.split(" ", 1)[0].lower().rstrip(",.;:")
            code = first if first in _CODES else ReasonCode.OTHER.value
            return ReplyDecision(Event.REJECT, code, clip(reason) or None)
    return None
