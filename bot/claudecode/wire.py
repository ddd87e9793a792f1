"""What a Claude Code `PreToolUse` command hook reads on stdin and writes on stdout.

In: `session_id`, `tool_name`, `tool_input`, `cwd`, `hook_event_name`, `tool_use_id`,
`permission_mode` (and `transcript_path`), one JSON object.

Out, always with exit code 0: `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
"permissionDecision": "allow" | "deny", "permissionDecisionReason": ...}}`, plus
`updatedInput` on an allow, and the common fields `continue: false` + `stopReason` when
a person stopped the run, `systemMessage` when the person at the terminal must fix
something. Exit code 2 (stderr as the reason) would also block a call, but Claude Code
then ignores stdout, so it could not stop the session or warn the user: JSON says all.
"""

from __future__ import annotations

import json
import re
import reprlib
from dataclasses import dataclass
from typing import Any

from bot.claudecode import messages as msg
from bot.core.args.plainjson import lone_surrogate
from bot.core.wire import RUN_ID
from bot.errors import HitlError

EVENT = "PreToolUse"
RUN_ID_MAX = 128  # bot.core.wire.RunId
_RUN_ID = re.compile(RUN_ID)
_short = reprlib.Repr()  # a value quoted in a reason: short, however big the input
_short.maxlevel, _short.maxstring, _short.maxother = 2, 60, 60


class BadInput(HitlError):
    """The hook's stdin is not a PreToolUse call we can gate; `str()` is Claude's reason."""


@dataclass(frozen=True)
class HookCall:
    """One tool call Claude Code is about to make."""

    session_id: str  # the run id: people steer and stop the session by it
    tool: str
    args: dict[str, Any]
    cwd: str | None = None
    tool_use_id: str | None = None


def parse(raw: bytes) -> HookCall:
    """The call, or BadInput naming what is wrong with the input.

    Whatever the bytes: text nested past the recursion limit, `NaN` (Python's json reads
    it, no strict reader does) and lone surrogates are bad input like the rest, refused
    here rather than failing later where the answer is harder to give."""
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _bad(msg.NOT_JSON.format(error=_problem(exc))) from None
    if not isinstance(data, dict):
        raise _bad(msg.NOT_JSON.format(error=f"got {type(data).__name__}"))
    event = data.get("hook_event_name")
    if event is not None and event != EVENT:
        raise _bad(msg.WRONG_EVENT.format(event=_short.repr(event)))
    session = _field(data, "session_id", str, "a string")
    tool = _field(data, "tool_name", str, "a string")
    args = _field(data, "tool_input", dict, "an object")
    if not session or len(session) > RUN_ID_MAX or not _RUN_ID.match(session):
        raise _bad(msg.BAD_SESSION.format(session=session[:200], most=RUN_ID_MAX))
    for name, value in (("tool_name", tool), ("tool_input", args)):
        if lone_surrogate(value):
            raise BadInput(msg.SURROGATE.format(field=name))
    cwd, use_id = data.get("cwd"), data.get("tool_use_id")
    return HookCall(
        session_id=session,
        tool=tool,
        args=args,
        cwd=cwd if isinstance(cwd, str) else None,
        tool_use_id=use_id if isinstance(use_id, str) else None,
    )


def _no_constant(name: str) -> Any:
    raise ValueError(msg.NOT_A_NUMBER.format(constant=name))


def _problem(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deep"
    return str(exc)


def _field(data: dict[str, Any], name: str, kind: type, what: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind) or (kind is str and not value):
        raise _bad(msg.MISSING.format(field=name, kind=what))
    return value


def _bad(problem: str) -> BadInput:
    return BadInput(msg.BAD_INPUT.format(problem=problem))


def allow(reason: str, updated_input: dict[str, Any]) -> dict[str, Any]:
    """Run the call with `updated_input`: the arguments the gate approved, always sent,
    so what runs is what was approved whether a person edited it or not."""
    return _decision("allow", reason, updatedInput=updated_input)


def deny(reason: str, *, tell_user: bool = False) -> dict[str, Any]:
    """Do not run the call; Claude reads `reason` as the tool's result. `tell_user`: the
    person at the terminal sees it too (something for them to fix)."""
    out = _decision("deny", reason)
    if tell_user:
        out["systemMessage"] = reason
    return out


def stop(reason: str, stop_reason: str) -> dict[str, Any]:
    """Deny the call and end the session's turn: a person stopped the run. Claude reads
    `reason`; the user sees `stop_reason`."""
    return {"continue": False, "stopReason": stop_reason, **_decision("deny", reason)}


def _decision(decision: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
            **extra,
        }
    }
