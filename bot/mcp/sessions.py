"""The run an MCP session's calls belong to, so people can steer and stop it from Slack.

A run id given at start (`--run-id`, `HITL_RUN_ID`) names every session's run: one
agent, one run, known in advance so a person can type `/hitl stop RUN`. Without one,
the gateway makes one when it starts, shown in the Run field of its cards.

The run is claimed by the gate's identity at its first use (an id another agent
already uses is refused, and the call with it), so a made id is random enough that
two gateways never meet.
"""

from __future__ import annotations

import os
import re
import secrets

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
    """The run id every call of this gateway carries: the given one, or one made when
    the gateway starts.

    Over stdio a process serves one MCP session, so that is one run per session. Over
    streamable HTTP, the MCP versions this SDK speaks keep no session between requests
    (no `Mcp-Session-Id`, a new connection object per request): nothing tells two
    clients apart, so the process's calls are one run. Give each agent its own gateway,
    or `--run-id`.
    """

    def __init__(self, fixed: str | None, *, prefix: str = "mcp", title: str | None = None) -> None:
        self.run_id = fixed or f"{prefix}-{secrets.token_hex(6)}"
        # What people see the run as (its cards, the App Home, `hitl-bot runs`): the
        # first call names it, so a given run id someone else named keeps its name.
        self.title = title
