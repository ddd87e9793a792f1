"""Slack-looking identifiers: message timestamps, view ids, trigger ids, event ids, hashes.

Timestamps are `"<seconds>.<micros>"` strings, strictly increasing across the whole
workspace (Slack guarantees uniqueness per channel; one sequence is stricter).
"""

from __future__ import annotations

import itertools
import re
import secrets
import string
import time
from collections.abc import Callable

Clock = Callable[[], float]  # epoch seconds

_ALNUM = string.ascii_uppercase + string.digits
TRIGGER_FORMAT = re.compile(r"^\d+\.\d+\.[0-9a-f]+$")


def _random_upper(n: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(n))


class Ids:
    """Every id the emulator hands out comes from here, so they never collide."""

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._last_micros = 0
        self._counter = itertools.count(1)

    def ts(self) -> str:
        """A message timestamp such as "1700000000.000100", later than every earlier one."""
        micros = max(int(self.clock() * 1_000_000), self._last_micros + 1)
        self._last_micros = micros
        seconds, frac = divmod(micros, 1_000_000)
        return f"{seconds}.{frac:06d}"

    def object_id(self, prefix: str) -> str:
        """An id like "V0007K3J9QX": prefix, a counter and random letters."""
        return f"{prefix}{next(self._counter):04d}{_random_upper(6)}"

    def short(self) -> str:
        """A generated block_id / action_id, as Slack fills in missing ones."""
        return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(5))

    def trigger_id(self) -> str:
        return f"{next(self._counter)}.{int(self.clock())}.{secrets.token_hex(16)}"

    def view_hash(self) -> str:
        return f"{int(self.clock())}.{secrets.token_hex(4)}"

    def event_id(self) -> str:
        return "Ev" + self.object_id("")

    def token(self) -> str:
        return secrets.token_urlsafe(18)

    def action_ts(self) -> str:
        return self.ts()
