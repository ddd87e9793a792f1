"""The hook's answer on stdout: one line of JSON, written whatever happened before.

Claude Code runs a call ungated after any exit code but 0 and 2, and reads stdout that
is not JSON as no decision. So this module imports nothing but the standard library, the
messages and a pure helper (a hook whose other imports fail still denies), encodes as
ASCII (no character can fail to encode on any stdout), turns an answer it cannot write
as it is into a deny, and ends quietly when Claude Code stops reading: a broken pipe
must not become exit 1.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sys
from collections.abc import Mapping
from typing import Any, BinaryIO

from bot.claudecode import messages as msg
from bot.core.args.plainjson import lone_surrogate

log = logging.getLogger(__name__)

_SURROGATE = re.compile("[\ud800-\udfff]")


def _deny(reason: str) -> dict[str, Any]:
    # wire.deny's shape, built here without wire's imports (pydantic, the core)
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        },
        "systemMessage": reason,
    }


# The answer when nothing better can be built or encoded: plain ASCII, known good.
LAST_RESORT = (json.dumps(_deny(msg.HOOK_BROKEN), ensure_ascii=True) + "\n").encode("ascii")


def encode(answer: Mapping[str, Any] | None) -> bytes:
    """`answer` as one line of ASCII JSON; never raises.

    JSON that holds a lone surrogate, NaN or anything else a strict reader refuses is
    not written as it is: a deny goes out with such text replaced (U+FFFD), an allow
    becomes a deny (the approved input is never changed on its way to Claude Code).
    `None`, or anything still not encodable, is LAST_RESORT."""
    if answer is None:
        return LAST_RESORT
    try:
        return _strict(answer)
    except Exception as exc:  # whatever it is, the answer cannot go out as it is
        log.warning("hook_answer_unwritable", extra={"error": repr(exc)})
    try:
        return _strict(_mended(answer))
    except Exception:
        return LAST_RESORT


def write(answer: Mapping[str, Any] | None, sink: BinaryIO | None = None) -> None:
    """Write `answer` (see encode) to `sink`, stdout by default; never raises."""
    try:
        data = encode(answer)
    except BaseException:  # an interrupt mid-encoding: the answer is still a deny
        data = LAST_RESORT
    try:
        out = sink if sink is not None else sys.stdout.buffer
        out.write(data)
        out.flush()
    except BaseException:  # Claude Code gone (a broken pipe), no stdout
        _silence(sink)


def _strict(answer: Mapping[str, Any]) -> bytes:
    if lone_surrogate(answer):
        raise ValueError("a lone surrogate, which UTF-8 cannot carry")
    text = json.dumps(answer, ensure_ascii=True, allow_nan=False)
    return (text + "\n").encode("ascii")


def _mended(answer: Mapping[str, Any]) -> dict[str, Any]:
    inner = answer.get("hookSpecificOutput")
    if not isinstance(inner, Mapping) or inner.get("permissionDecision") != "deny":
        return _deny(msg.ANSWER_UNWRITABLE)
    return {str(_clean(k)): _clean(v) for k, v in answer.items()}


def _clean(value: Any) -> Any:
    # an answer is a few levels deep (the input is only in an allow, never mended)
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {str(_clean(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):  # NaN, Infinity: not JSON
        return None
    return value


def _silence(sink: BinaryIO | None) -> None:
    """Point stdout at /dev/null: the interpreter flushes it again on exit, and a second
    broken pipe there would print a traceback and exit 120."""
    try:
        fd = (sink if sink is not None else sys.stdout.buffer).fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except BaseException:  # no stdout at all: nothing to silence
        return
