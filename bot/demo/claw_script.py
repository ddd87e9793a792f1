"""The claw machine's model for the demo: rules that read the conversation like a model would.

It reacts to what people did, as the tool results tell it: a correction
("Cancelled. The person says: No, wait! The penguin!") retargets the claw, an
answer to "Is this the one?" confirms or retargets, a rejection or an
unanswered approval ends the run with an apology, and an approved drop ends it
with the prize.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.agent.llm import tool_calls_of
from bot.demo.agents.claw import PRIZES
from bot.sandbox.model import ScriptedModel, Turn, call, say

STEP_CM = 10
YES = re.compile(r"\b(yes|yeah|yep|yup|sure|ok|okay|that one|si|sí)\b", re.IGNORECASE)
ENDINGS = (
    ("Rejected", "Sorry! I won't drop the claw. Tell me what to do instead."),
    ("Nobody answered in time", "Nobody said yes, so I did not drop the claw."),
    ("Nobody answered the question", "Nobody answered, so I won't guess. I stopped here."),
    ("Cancelled: the run was stopped", "Stopped."),
)


def _prize_in(text: str) -> str | None:
    found = [(text.lower().find(p), p) for p in PRIZES if p in text.lower()]
    return min(found)[1] if found else None


@dataclass
class _Reading:
    """What the conversation says so far."""

    target: str | None = None
    x: int = 0
    y: int = 0
    asked: bool = False  # asked "Is this the one?" at the current target
    kid_spoke: bool = False  # a correction or an answer named or confirmed the prize
    drop_result: str | None = None
    ending: str | None = None


def _read(messages: Sequence[Mapping[str, Any]]) -> _Reading:
    r = _Reading()
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    r.target = _prize_in(str(first_user.get("content") or "")) if first_user else None
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        if m.get("role") == "assistant":
            for c in tool_calls_of(m):
                calls[c.id] = (c.name, json.loads(c.arguments or "{}"))
        elif m.get("role") == "tool":
            name, args = calls.get(str(m.get("tool_call_id")), ("", {}))
            _apply(r, name, args, str(m.get("content") or ""))
    return r


def _apply(r: _Reading, name: str, args: dict[str, Any], result: str) -> None:
    if result.startswith("Cancelled. The person says:"):
        r.kid_spoke = True
        r.target = _prize_in(result) or r.target
        r.asked = False
        return
    for prefix, ending in ENDINGS:
        if result.startswith(prefix):
            r.ending = ending
            return
    if name == "move_claw" and not result.startswith("Error"):
        dx, dy = {"left": (-1, 0), "right": (1, 0), "forward": (0, 1), "back": (0, -1)}[
            args["direction"]
        ]
        r.x, r.y = r.x + dx * int(args["cm"]), r.y + dy * int(args["cm"])
    elif name == "ask_kid":
        named = _prize_in(result)
        r.asked = True
        if named and named != r.target:
            r.target, r.asked = named, False
        r.kid_spoke = bool(named) or bool(YES.search(result))
    elif name == "drop_claw":
        r.drop_result = result


def _after_drop(result: str) -> str:
    """What to tell the kid, from what the drop's tool result says really happened."""
    if "Grabbed" in result:
        prize = _prize_in(result.split("Grabbed", 1)[1]) or "prize"
        edited = " (a grown-up changed where I dropped it)" if "edited" in result else ""
        return f"Got it! Here is your {prize}{edited}."
    if "came up empty" in result:
        return "Oh no, the claw came up empty. That was the last coin, sorry!"
    # Cancelled, refused or failed: the coin was not spent; say why, never invent a result.
    return f"I did not drop the claw: {result}"


def _step(r: _Reading, target: str) -> Turn | None:
    tx, ty = PRIZES[target]
    if r.x != tx:
        cm = min(STEP_CM, abs(tx - r.x))
        return call("move_claw", direction="right" if tx > r.x else "left", cm=cm)
    if r.y != ty:
        cm = min(STEP_CM, abs(ty - r.y))
        return call("move_claw", direction="forward" if ty > r.y else "back", cm=cm)
    return None


def claw_responder(messages: Sequence[Mapping[str, Any]]) -> Turn:
    r = _read(messages)
    if r.ending:
        return say(r.ending)
    if r.drop_result is not None:
        return say(_after_drop(r.drop_result))
    if r.target is None:
        if r.asked:
            return say("I still don't know which prize you want, so I won't drop the claw.")
        return call("ask_kid", question="Which prize do you want?")
    move = _step(r, r.target)
    if move is not None:
        return move
    if not r.kid_spoke and not r.asked:
        return call("ask_kid", question=f"Is this the one? The claw is over the {r.target}.")
    if not r.kid_spoke:
        return say("You did not say yes, so I won't drop the claw.")
    return call("drop_claw", target=r.target)


async def _serve_claw(host: str, port: int) -> None:
    model = ScriptedModel(claw_responder)
    print(f"scripted claw model at {await model.start(host, port)}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await model.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m bot.demo.claw_script --port 8001`: the claw machine's model, for manual runs."""
    p = argparse.ArgumentParser(prog="python -m bot.demo.claw_script")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8001)
    a = p.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_claw(a.host, a.port))


if __name__ == "__main__":
    main()
