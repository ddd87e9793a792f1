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


# The map drawn from the code's own imports (function-local ones included, TYPE_CHECKING
# ones left out: they never run): no circle between modules or between folders, and no
# folder so big that its name no longer says what is in it.
MAX_FOLDER = 22


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    typing_only = {
        id(x)
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
        for b in n.body
        for x in ast.walk(b)
    }
    out: set[str] = set()
    for n in ast.walk(tree):
        if id(n) in typing_only:
            continue
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("bot"):
            out |= {f"{n.module}.{a.name}" for a in n.names}  # a name or a submodule
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names if a.name.startswith("bot")}
    return out


def _graph() -> tuple[dict[str, Path], dict[str, set[str]]]:
    mods = {}
    for p in BOT.rglob("*.py"):
        parts = p.relative_to(BOT.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for name in _imports(p):
            while name and name not in mods:
                name = name.rpartition(".")[0]
            if name and name != m:
                edges[m].add(name)
    return mods, edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


def _folder(p: Path) -> str:
    return ".".join(p.parent.relative_to(BOT.parent).parts)


def test_no_module_imports_in_a_circle() -> None:
    _, edges = _graph()
    assert _circles(edges) == []


def test_no_folder_imports_in_a_circle() -> None:
    """A folder and its own subfolders aside (a package's `__init__` and its parts)."""
    mods, edges = _graph()
    folders: dict[str, set[str]] = {}
    for m, targets in edges.items():
        a = _folder(mods[m])
        for t in targets:
            b = _folder(mods[t])
            if a != b and not a.startswith(b + ".") and not b.startswith(a + "."):
                folders.setdefault(a, set()).add(b)
                folders.setdefault(b, set())
    assert _circles(folders) == []


def test_the_circle_check_finds_one() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_folder_holds_more_than_its_name_can_say() -> None:
    mods, _ = _graph()
    sizes: dict[str, int] = {}
    for p in mods.values():
        if p.name != "__init__.py":
            sizes[_folder(p)] = sizes.get(_folder(p), 0) + 1
    assert len(sizes) > 20
    assert {f: n for f, n in sizes.items() if n > MAX_FOLDER} == {}
