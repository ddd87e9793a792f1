"""What `/healthz` reports of a part that is down: its name, and words of our own.

An exception's text can carry a host name, a path, a key or a fragment of a
command, and `/healthz` answers without a token. So a probe says which part is
down and, at most, how long and how often; the error itself goes to the log.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Down:
    part: str  # "redis", "slack_socket_mode", "task:sweeper"
    detail: str  # a fixed sentence from a `messages` module, never an exception's text
