"""Every user-facing template is filled with exactly the placeholders it names.

The sentences hitl-bot shows live as `str.format` templates in its `messages` modules,
where a wrong placeholder would only show as a KeyError at the moment a person needs
the sentence. This test reads bot/ instead: for every template it finds each place the
template is used, and checks that the `.format(...)` call there passes by keyword exactly
the names the template holds. Templates may reach `.format` in these shapes only:

    msg.NAME.format(...)
    (msg.A if cond else msg.B).format(...)
    msg.TABLE[key].format(...)             msg.TABLE.get(key, msg.DEFAULT).format(...)
    name = <one of the above, unformatted>; ...; name.format(...)   (in one function)

Anything else (a template passed to a function, stored in a field, joined to another
string before formatting) is refused: fill it where it is picked. A string that holds no
placeholder is plain text and may go anywhere.
"""

from __future__ import annotations

import ast
import importlib
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bot"


def _is_messages_module(path: Path) -> bool:
    return path.name.endswith("messages.py") or path.parent.name == "messages"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(BOT.rglob("*.py")) if _is_messages_module(p)}


def fields(template: str) -> set[str]:
    """The names `template` asks `str.format` for (ValueError if it does not parse)."""
    names = set()
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            names.add(name.split(".", 1)[0].split("[", 1)[0])
    return names


@dataclass(frozen=True)
class Template:
    where: str  # "bot.messages.NAME" or "bot.messages.NAME[key]"
    names: frozenset[str]


def _constants(mod: str) -> dict[str, Any]:
    """The module's public strings and tables, as Python evaluated them."""
    return {
        name: value
        for name, value in vars(importlib.import_module(mod)).items()
        if not name.startswith("_") and isinstance(value, str | dict)
    }


CONSTANTS = {mod: _constants(mod) for mod in MODULES}


def _texts(value: Any) -> Iterator[tuple[str, str]]:
    """(key suffix, string) for a string or every string value of a table."""
    if isinstance(value, str):
        yield "", value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                yield f"[{key!r}]", item


def _safe_fields(text: str) -> set[str]:
    try:
        return fields(text)
    except ValueError:  # test_every_template_parses names it
        return set()


def templates_of(mod: str, name: str) -> list[Template]:
    """The templates `mod.NAME` holds: itself, or each entry of a table, that has a
    placeholder (text without one is plain and may go anywhere)."""
    value = CONSTANTS[mod].get(name)
    return [
        Template(f"{mod}.{name}{key}", frozenset(names))
        for key, text in _texts(value)
        if (names := _safe_fields(text))
    ]


# -- reading bot/ ---------------------------------------------------------------------


@dataclass
class Use:
    """One place a template is formatted, or used without being formatted."""

    path: Path
    line: int
    templates: list[Template]
    call: ast.Call | None  # the `.format(...)` call, None: used otherwise


@dataclass
class Scan:
    uses: list[Use] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # "mod.NAME" of every attribute read


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> messages module, from `from X import messages as m` and the like."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in MODULES:
                    out[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname:
                    out[alias.asname] = alias.name
    return out


class _Reader:
    def __init__(self, path: Path, tree: ast.Module, scan: Scan) -> None:
        self.path, self.scan = path, scan
        self.aliases = _aliases(tree)
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.claimed: set[ast.AST] = set()  # attribute reads accounted for

    def imported(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in MODULES:
                self.scan.seen.update(f"{node.module}.{a.name}" for a in node.names)

    def ref(self, node: ast.AST) -> tuple[str, str] | None:
        """(module, NAME) when `node` is `alias.NAME`."""
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.aliases
        ):
            return self.aliases[node.value.id], node.attr
        return None

    def picked(self, node: ast.AST) -> tuple[list[Template], list[ast.AST]] | None:
        """The templates an expression may yield and the reads it is made of; None if
        it is not one of the shapes that pick a template."""
        if (r := self.ref(node)) is not None:
            return templates_of(*r), [node]
        if isinstance(node, ast.IfExp):
            a, b = self.picked(node.body), self.picked(node.orelse)
            if a is None or b is None:
                return None
            return a[0] + b[0], a[1] + b[1]
        if isinstance(node, ast.Subscript) and (r := self.ref(node.value)) is not None:
            return self._entry(r, node.slice), [node.value]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and (r := self.ref(node.func.value)) is not None
            and node.args
            and not node.keywords
        ):
            found, reads = self._entry(r, node.args[0]), [node.func.value]
            if len(node.args) > 1:
                default = self.picked(node.args[1])
                if default is None:
                    if _maybe_template(node.args[1], self):
                        return None
                else:
                    found, reads = found + default[0], reads + default[1]
            return found, reads
        return None

    def _entry(self, r: tuple[str, str], key: ast.AST) -> list[Template]:
        every = templates_of(*r)
        if isinstance(key, ast.Constant):
            return [t for t in every if t.where.endswith(f"[{key.value!r}]")]
        return every

    def read(self, tree: ast.Module) -> None:
        for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, _FUNCTIONS))]:
            self._scope(scope)
        for node in ast.walk(tree):
            if (r := self.ref(node)) is not None:
                self.scan.seen.add(".".join(r))
                if node not in self.claimed and templates_of(*r):
                    self.scan.uses.append(Use(self.path, node.lineno, templates_of(*r), None))

    def _scope(self, scope: ast.AST) -> None:
        local: dict[str, tuple[list[Template], list[ast.AST]]] = {}
        for node in _own_nodes(scope):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                got = self.picked(node.value)
                if isinstance(target, ast.Name) and got is not None and got[0]:
                    prior = local.get(target.id, ([], []))
                    local[target.id] = (prior[0] + got[0], prior[1] + got[1])
        formatted: set[str] = set()
        for node in _own_nodes(scope):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"
            ):
                continue
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and receiver.id in local:
                found = local[receiver.id][0]
                formatted.add(receiver.id)  # its reads count once every load is a .format
            elif (got := self.picked(receiver)) is not None:
                found = got[0]
                self.claimed.update(got[1])
            else:
                continue
            self.scan.uses.append(Use(self.path, node.lineno, found, node))
        for name, (_, reads) in local.items():
            loads = [
                n
                for n in _own_nodes(scope)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            ]
            fmt_loads = {
                n
                for n in loads
                if isinstance(self.parents.get(n), ast.Attribute)
                and self.parents[n].attr == "format"  # type: ignore[attr-defined]
            }
            if name in formatted and len(fmt_loads) == len(loads):
                self.claimed.update(reads)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one function (or the module), not of the functions inside it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _FUNCTIONS):
            todo.extend(ast.iter_child_nodes(node))


def _maybe_template(node: ast.AST, reader: _Reader) -> bool:
    return any((r := reader.ref(n)) is not None and templates_of(*r) for n in ast.walk(node))


def scan(root: Path = BOT) -> Scan:
    found = Scan()
    for path in sorted(root.rglob("*.py")):
        if _is_messages_module(path):
            continue
        tree = ast.parse(path.read_text())
        reader = _Reader(path, tree, found)
        reader.imported(tree)
        if reader.aliases:
            reader.read(tree)
    return found


def problems(use: Use) -> list[str]:
    path = use.path.relative_to(ROOT) if use.path.is_relative_to(ROOT) else use.path
    where = f"{path}:{use.line}"
    if use.call is None:
        names = ", ".join(t.where for t in use.templates)
        return [f"{where}: {names} is used without being formatted where it is picked"]
    out = []
    if use.call.args:
        out.append(f"{where}: positional arguments to .format(); pass each name by keyword")
    if any(k.arg is None for k in use.call.keywords):
        out.append(f"{where}: .format(**...) hides which names are passed; name each one")
    given = {k.arg for k in use.call.keywords if k.arg is not None}
    needed: set[str] = set()
    for t in use.templates:
        needed |= t.names
        if missing := t.names - given:
            out.append(f"{where}: {t.where} needs {sorted(missing)}, not passed")
    if extra := given - needed:
        out.append(f"{where}: {sorted(extra)} passed but no template here names them")
    if not use.templates:
        out.append(f"{where}: .format() on text that holds no placeholder")
    return out


SCAN = scan()


def test_the_messages_modules_are_found() -> None:
    assert "bot.messages" in MODULES and len(MODULES) >= 7
    assert len(SCAN.uses) > 200  # the scan sees the formatting calls, not nothing


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_every_template_parses(mod: str) -> None:
    bad = []
    for name, value in CONSTANTS[mod].items():
        for key, text in _texts(value):
            try:
                names = fields(text)
            except ValueError as exc:
                bad.append(f"{mod}.{name}{key}: {exc}")
                continue
            if any(not n or n.isdigit() for n in names):
                bad.append(f"{mod}.{name}{key}: a positional placeholder; name it")
    assert not bad, "\n".join(bad)


def test_every_format_call_passes_exactly_the_placeholders() -> None:
    bad = [p for use in SCAN.uses for p in problems(use)]
    assert not bad, "\n".join(bad)


def test_every_template_is_used() -> None:
    unused = [
        f"{mod}.{name}"
        for mod, consts in CONSTANTS.items()
        for name, value in consts.items()
        if not name.startswith("_")
        and any(True for _ in _texts(value))
        and f"{mod}.{name}" not in SCAN.seen
        and not _read_in_its_module(mod, name)
    ]
    assert not unused, "\n".join(unused)


def _read_in_its_module(mod: str, name: str) -> bool:
    tree = ast.parse(MODULES[mod].read_text())
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(tree)
    )


def test_a_wrong_placeholder_is_caught(tmp_path: Path) -> None:
    """The check itself: a call that names a placeholder the template lacks fails."""
    mod = "bot.messages"
    name, template = next(
        (n, t[0])
        for n in CONSTANTS[mod]
        if (t := templates_of(mod, n)) and len(t) == 1 and len(t[0].names) == 1
    )
    (right,) = template.names

    def found(code: str) -> list[str]:
        (tmp_path / "use.py").write_text("from bot import messages as msg\n" + code)
        return [p for use in scan(tmp_path).uses for p in problems(use)]

    assert found(f"msg.{name}.format({right}=1)\n") == []
    assert found(f"t = msg.{name} if x else msg.{name}\nt.format({right}=1)\n") == []
    assert found(f"msg.{name}.format({right}_typo=1)\n")
    assert found(f"msg.{name}.format(1)\n")
    assert found(f"msg.{name}.format(**{{'{right}': 1}})\n")
    assert found(f"x = msg.{name}\nprint(x + '!')\n")
    assert found(f"show(msg.{name})\n")
    assert found(f"t = msg.{name}\nt.format({right}=1)\nshow(t)\n")
    assert found(f"msg.NOT_A_TEMPLATE_NAME.format({right}=1)\n")
