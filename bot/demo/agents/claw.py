"""The claw machine from the mission: moving is free, dropping spends the last coin.

Each run gets its own machine (keyed by run id, in this process's memory):
it is a toy for the demo, not a device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from bot.agent.loader import Agent
from bot.agent.tools import ask_tool, tool

Direction = Literal["left", "right", "forward", "back"]
STEPS: dict[str, tuple[int, int]] = {
    "left": (-1, 0),
    "right": (1, 0),
    "forward": (0, 1),
    "back": (0, -1),
}
OPPOSITE: dict[str, Direction] = {
    "left": "right",
    "right": "left",
    "forward": "back",
    "back": "forward",
}
# Where each prize sits, in cm from where the claw starts (x to the right, y forward).
PRIZES: dict[str, tuple[int, int]] = {
    "bear": (-20, 0),
    "penguin": (15, 0),
    "unicorn": (0, 20),
    "duck": (10, 10),
}
REACH_CM = 3  # the claw grabs a prize this close to where it drops

SYSTEM_PROMPT = (
    "You work a claw machine for Tina. If you are not sure which prize she means, ask her "
    "with ask_kid before acting. Moving the claw (move_claw) is free and can be undone; "
    "dropping it (drop_claw) spends the last coin and cannot be undone, so first move the "
    "claw right over the prize. Prizes, from where the claw starts: bear 20 cm left, "
    "penguin 15 cm right, unicorn 20 cm forward, duck 10 cm right and 10 cm forward. "
    "If Tina corrects you, follow her correction."
)


@dataclass
class Machine:
    x: int = 0
    y: int = 0
    coins: int = 1
    drops: dict[str, str] = field(default_factory=dict)  # idempotency key -> result

    def under(self) -> str | None:
        for name, (px, py) in PRIZES.items():
            if abs(px - self.x) <= REACH_CM and abs(py - self.y) <= REACH_CM:
                return name
        return None


MACHINES: dict[str, Machine] = {}


def machine(run_id: str) -> Machine:
    return MACHINES.setdefault(run_id, Machine())


def _move(m: Machine, direction: str, cm: int) -> str:
    dx, dy = STEPS[direction]
    m.x += dx * cm
    m.y += dy * cm
    over = m.under()
    where = f"over the {over}" if over else "over no prize"
    return f"Moved {direction} {cm} cm; the claw is at x={m.x}, y={m.y}, {where}."


def _move_back(direction: Direction, cm: int, run_id: str) -> None:
    _move(machine(run_id), OPPOSITE[direction], cm)


@tool(risk="low", review=False, compensate=_move_back)
def move_claw(direction: Direction, cm: Annotated[int, Field(ge=1, le=30)], run_id: str) -> str:
    """Move the claw. Free, and undone by moving back."""
    return _move(machine(run_id), direction, cm)


@tool(risk="medium")
def drop_claw(target: str, run_id: str, idempotency_key: str) -> str:
    """Drop the claw on the prize under it. Spends the last coin: cannot be undone."""
    m = machine(run_id)
    if idempotency_key in m.drops:  # the same approved drop, retried: never spend twice
        return m.drops[idempotency_key]
    if m.coins <= 0:
        raise RuntimeError("no coins left")
    m.coins -= 1
    got = m.under()
    if got is None:
        result = f"The claw came up empty: it was not over the {target}."
    elif got == target:
        result = f"Grabbed the {got}!"
    else:
        result = f"Grabbed the {got}, not the {target}."
    m.drops[idempotency_key] = result
    return result


agent = Agent.of(
    "claw",
    SYSTEM_PROMPT,
    [
        move_claw,
        drop_claw,
        ask_tool("ask_kid", "Ask Tina a question and wait for her answer. Never guess."),
    ],
    requester="claw-agent",
)
