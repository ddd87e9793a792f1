"""`hitl-bot claude-code hook`: read one PreToolUse call on stdin, answer on stdout.

It always answers with JSON and exit code 0, whatever happens: any other exit code but 2
is a non-blocking error to Claude Code, which would then run the call ungated. So
malformed input (any bytes at all), a gate that cannot be reached, and a bug in this
code all deny, and the answer is written by `answer`, which cannot fail to encode it.

Claude Code kills a hook it stops waiting for (its `timeout`, or the user interrupting
the turn). SIGTERM, SIGINT and SIGHUP cancel the wait instead, and the gate withdraws
the request on the way out: nobody is left approving a call that will never run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from typing import Any, BinaryIO

from bot.claudecode import answer, wire
from bot.claudecode import messages as msg
from bot.claudecode.decide import decide
from bot.errors import HitlError
from bot.sdk import Gate

log = logging.getLogger(__name__)

DEFAULT_REQUESTER = "claude-code"  # who the requests name in direct mode
_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def run(
    *,
    timeout_s: float,
    requester: str | None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Answer the call on stdin with one line of JSON on stdout; never raises.

    Every failure, from reading stdin to writing the answer, ends in a deny with exit
    code 0: a crash would let the call through."""
    try:
        reply = _reply(stdin, timeout_s=timeout_s, requester=requester)
    except BaseException:  # even the deny for a failure failed: answer the fixed one
        reply = None
    answer.write(reply, stdout)


def _reply(stdin: BinaryIO | None, *, timeout_s: float, requester: str | None) -> dict[str, Any]:
    tool = "the tool call"
    try:
        call = wire.parse((stdin or sys.stdin.buffer).read())
        tool = call.tool
        return asyncio.run(_answer(call, timeout_s=timeout_s, requester=requester))
    except wire.BadInput as exc:
        return wire.deny(str(exc), tell_user=True)
    except KeyboardInterrupt:  # SIGINT before the wait took over the signals
        return wire.deny(msg.INTERRUPTED.format(tool=tool))
    except BaseException as exc:  # a bug: deny, and leave the traceback for the operator
        log.exception("hook_failed")
        return wire.deny(msg.CRASHED.format(tool=tool, error=exc), tell_user=True)


async def _answer(
    call: wire.HookCall, *, timeout_s: float, requester: str | None
) -> dict[str, Any]:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in _SIGNALS:
        loop.add_signal_handler(sig, task.cancel)
    try:
        try:
            gate = _gate(requester)
        except HitlError as exc:
            text = msg.GATE_FAILED.format(tool=call.tool, error=exc)
            return wire.deny(text, tell_user=True)
        async with gate:
            return await decide(gate, call, timeout_s=timeout_s)
    except asyncio.CancelledError:
        # Claude Code is gone or going; the answer is for the log, and fails closed.
        return wire.deny(msg.INTERRUPTED.format(tool=call.tool))
    finally:
        for sig in _SIGNALS:
            loop.remove_signal_handler(sig)


def _gate(requester: str | None) -> Gate:
    """The gate from the environment. Over HTTP the API token names the requester (any
    other name is refused), so the default name is for direct mode only. A wait that
    Claude Code interrupts is withdrawn as `abandoned`."""
    if os.environ.get("HITL_API_URL"):
        named = {"requester": requester} if requester else {}
        return Gate.from_env(gone_reason="abandoned", **named)
    return Gate.from_env(requester=requester or DEFAULT_REQUESTER, gone_reason="abandoned")
