"""trigger_id bookkeeping: each interaction issues one; `views.open`/`views.push` exchange it.

Slack accepts a trigger for 3 seconds and only once. Errors use Slack's codes:
`invalid_trigger_id` (not shaped like a trigger), `expired_trigger_id` (unknown or too old),
`exchanged_trigger_id` (already used).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.sandbox.slack.errors import WebApiError
from bot.sandbox.slack.ids import TRIGGER_FORMAT, Ids

TRIGGER_TTL_SECONDS = 3.0


@dataclass
class _Trigger:
    user: str
    issued_at: float
    exchanged: bool = False


class Triggers:
    def __init__(self, ids: Ids, ttl: float = TRIGGER_TTL_SECONDS) -> None:
        self.ids = ids
        self.ttl = ttl
        self._issued: dict[str, _Trigger] = {}

    def clear(self) -> None:
        self._issued.clear()

    def issue(self, user: str) -> str:
        trigger_id = self.ids.trigger_id()
        self._issued[trigger_id] = _Trigger(user, self.ids.clock())
        return trigger_id

    def exchange(self, trigger_id: str) -> str:
        """The user the trigger was issued to; raises WebApiError when it cannot be used."""
        if not TRIGGER_FORMAT.match(trigger_id):
            raise WebApiError("invalid_trigger_id")
        found = self._issued.get(trigger_id)
        if found is None or self.ids.clock() - found.issued_at > self.ttl:
            raise WebApiError("expired_trigger_id")
        if found.exchanged:
            raise WebApiError("exchanged_trigger_id")
        found.exchanged = True
        return found.user
