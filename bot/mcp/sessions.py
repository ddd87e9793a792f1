"""The run an MCP session's calls belong to, so people can steer and stop it from Slack.

A run id given at start (`--run-id`, `HITL_RUN_ID`) names every session's run: one
agent, one run, known in advance so a person can type `/hitl stop RUN`. Without one,
each MCP session gets its own id, made at its first call and shown in the Run field
of its first card (over stdio a process serves one session; over HTTP, several).

The run is claimed by the gate's identity at its first use (an id another agent
already uses is refused, and the call with it), so a made id is random enough that
two gateways never meet.
"""

from __future__ import annotations

import os
import re
import secrets
import weakref

from bot.core.wire import RUN_ID
from bot.errors import ConfigError
from bot.mcp import messages as msg

RUN_ID_ENV = "HITL_RUN_ID"
MAX_RUN_ID = 128


def given_run_id(option: str | None) -> str | None:
    """The run id from the option, else the environment; ConfigError if malformed."""
    run_id = option or os.environ.get(RUN_ID_ENV) or None
    if run_id is not None and (len(run_id) > MAX_RUN_ID or not re.match(RUN_ID, run_id)):
        raise ConfigError(msg.BAD_RUN_ID.format(run_id=run_id[:140]))
    return run_id


class SessionRuns:
    """One run id per MCP session: the given one, or one made for the session."""

    def __init__(self, fixed: str | None, *, prefix: str = "mcp") -> None:
        self.fixed = fixed
        self.prefix = prefix
        # Keyed by the session object: a session that ends takes its entry with it.
        self._made: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()

    def for_session(self, session: object | None) -> str:
        if self.fixed is not None:
            return self.fixed
        if session is None:  # no session known (a direct call in-process): one per gateway
            session = self
        made = self._made.get(session)
        if made is None:
            made = f"{self.prefix}-{secrets.token_hex(6)}"
            self._made[session] = made
        return made
