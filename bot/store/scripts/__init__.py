"""The store's Lua scripts, one per transition, as named constants. Each is one atomic
round trip.

Times come in as ARGV (never the server's clock), so the injected clock of the caller
is the only clock. Each script starts with the constants and helpers of
`common.COMMON` (the transition table rendered from `bot.core.states.TRANSITIONS`, so
Lua and the pure model share one table); its own text (`NAME.lua` beside this file)
names its KEYS and ARGV in its first lines. The guards mirror `bot.core.machine`, and
a property test runs both side by side (tests/store/lua_vs_core.py).

Every request script takes the request's KEYS (bot/store/keys.py `request_keys`):
one hash tag, so each touches one cluster slot. Replies are {status, JSON}.
"""

from __future__ import annotations

from bot.core.states import HUMAN_EVENTS, Event
from bot.store.scripts.common import (
    COMMON,
    TERMS_ERROR,
    TRANSITION_COMMON,
    WAKE_TTL_S,
    read,
    script,
)

__all__ = [
    "ALL",
    "CANCEL",
    "CLAIM",
    "CREATE",
    "DECIDE",
    "GRANT",
    "QUESTION",
    "REPORT",
    "STEP_UP",
    "TERMS_ERROR",
    "TIMEOUT",
    "TRANSITION_SCRIPTS",
    "WAIT",
    "WAKE_TTL_S",
    "WITH_AUDIT",
    "script_for",
]

CREATE = script(TRANSITION_COMMON, read("create.lua"))
DECIDE = script(TRANSITION_COMMON, read("decide.lua"))
TIMEOUT = script(TRANSITION_COMMON, read("timeout.lua"))
CLAIM = script(TRANSITION_COMMON, read("claim.lua"))
REPORT = script(TRANSITION_COMMON, read("report.lua"))
CANCEL = script(TRANSITION_COMMON, read("cancel.lua"))
QUESTION = script(COMMON, read("question.lua"))
GRANT = read("grant.lua")  # standing approvals (bot/store/grants.py): no request keys
STEP_UP = script(COMMON, read("stepup.lua"))  # a refused step-up, audited (passkeys.py)
WITH_AUDIT = read("with_audit.lua")  # a request and its audit in one read (requests.py)
WAIT = read("wait.lua")  # a waiter makes its item's wake stream (waiting.py)

# The transition scripts by name, and the name of each event's script.
TRANSITION_SCRIPTS: dict[str, str] = {
    "decide": DECIDE,
    "timeout": TIMEOUT,
    "claim": CLAIM,
    "report": REPORT,
    "cancel": CANCEL,
}
_BY_EVENT: dict[Event, str] = {e: "decide" for e in HUMAN_EVENTS} | {
    Event.TIMEOUT: "timeout",
    Event.CLAIM: "claim",
    Event.SUCCEED: "report",
    Event.FAIL: "report",
    Event.ROLLBACK_OK: "report",
    Event.ROLLBACK_FAILED: "report",
    Event.CANCEL: "cancel",
}
ALL: dict[str, str] = {
    "create": CREATE,
    **TRANSITION_SCRIPTS,
    "question": QUESTION,
    "grant": GRANT,
    "stepup": STEP_UP,
    "wait": WAIT,
}


def script_for(event: Event) -> str | None:
    """The name of the script that applies `event`; None for the steps the machine
    chains on its own (close, reassign, compensate, give_up) and `create`, which no
    caller sends as a decision."""
    return _BY_EVENT.get(event)
