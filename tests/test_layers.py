"""The layer contract (pyproject.toml, [tool.importlinter]) holds: `pytest` alone catches an
import that points upward, a Redis client outside bot/store, or slack, agent and api
importing each other, as `lint-imports` in .ci/run does."""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture
def logging_kept() -> Iterator[None]:
    """lint_imports configures logging with dictConfig, which disables every logger that
    exists then: the tests after it that read the bot's log lines would see none."""
    loggers = [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    disabled = {lg.name: lg.disabled for lg in loggers}
    yield
    for lg in loggers:
        lg.disabled = disabled[lg.name]


def test_every_import_keeps_the_layer_contract(logging_kept: None) -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0


# What moves a request: RequestStore's writing methods and the free call's frame. Only the
# use cases (bot/gate) call them, and the store itself; a face that did would be a route
# to "approved" that the sealed-routes walk (tests/store/test_every_route_sealed.py) and
# the gate's invariants never see.
MOVES = frozenset({"transition", "advance", "timeout_many", "create_again", "send_claimed"})
CREATES_ON = frozenset({"requests", "store"})  # `<...>.requests.create(...)`, `store.create`
SEAM = ("gate", "store")
BOT = PYPROJECT.parent / "bot"


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def moves_in(text: str, where: str) -> list[str]:
    """Each call in `text` that moves a request, as `where:line name`."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        on = _name(node.func.value) if isinstance(node.func, ast.Attribute) else ""
        if name in MOVES or (name == "create" and on in CREATES_ON):
            found.append(f"{where}:{node.lineno} {name}")
    return found


def test_only_the_use_cases_move_a_request() -> None:
    outside = [p for p in BOT.rglob("*.py") if p.relative_to(BOT).parts[0] not in SEAM]
    assert len(outside) > 100  # the walk found the faces
    calls = [c for p in outside for c in moves_in(p.read_text(), str(p.relative_to(BOT)))]
    assert calls == [], "call bot.gate's use cases instead:\n" + "\n".join(calls)


@pytest.mark.parametrize(
    "bypass",
    [
        "await self.rt.requests.transition(rid, d)",
        "await requests.advance(rid, d)",
        "await self.requests.create(policy, tool=t, args={}, requester=u)",
        "await send_claimed(store, prep)",
        "await self.requests.timeout_many(timers)",
    ],
)
def test_the_seam_check_sees_a_face_that_moves_a_request(bypass: str) -> None:
    face = (BOT / "slack" / "listeners" / "approvals.py").read_text()
    assert moves_in(face, "approvals.py") == []
    bypassed = face + f"\n\nasync def _bypass(self, requests, store):\n    {bypass}\n"
    assert len(moves_in(bypassed, "approvals.py")) == 1
