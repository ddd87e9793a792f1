"""What a caller's schema may hold before it is accepted: keywords, and patterns RE2 runs.

The size and depth are checked in `bot.core.args.schema`; this walk adds the two bounds
that need to read the schema itself:

- at most `MAX_KEYWORDS` keys in the whole document, so the work of compiling and
  checking it stays small (the check's own cost is bounded at run time too, by
  `bot.core.args.safeschema`);
- every `pattern` and every `patternProperties` name compiles in RE2. A pattern RE2
  cannot run (a backreference, a lookaround) is refused here, with the place it
  sits, rather than discovered when a person's edit is checked.

jsonschema's `unevaluatedProperties` matches `patternProperties` names with Python's
backtracking `re`, so a schema that uses both is refused too.

The walk is iterative (the schema's depth is checked before it), and reads every
object in the document except the values of `const`, `enum`, `default` and
`examples`, which are data; an unknown keyword's value is read as a schema, since a
`$ref` can point into it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bot import messages as msg
from bot.core.args.saferegex import MAX_MEMORY, pattern_problem

MAX_KEYWORDS = 500  # a tool of 40 typed arguments, as pydantic describes it: about 120
# Distinct patterns (and patternProperties names): each new one is compiled, up to 10 ms.
MAX_PATTERNS = 16

_DATA = frozenset({"const", "enum", "default", "examples", "example"})
# Keywords whose value maps names (not keywords) to subschemas.
_NAMED = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
     "dependencies"}
)  # fmt: skip


def _where(path: tuple[str, ...]) -> str:
    return "".join(f".{p}" for p in path)


def _nodes(schema: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every object read as a schema, with its path from the root."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, list):
            stack.extend(((*path, str(i)), v) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key in _DATA:
                continue
            if key in _NAMED and isinstance(value, dict):
                stack.extend(((*path, key, name), sub) for name, sub in value.items())
            else:
                stack.append(((*path, key), value))


def _refused(path: tuple[str, ...], why: str) -> str:
    return msg.SCHEMA_PATTERN.format(where=_where(path), error=why, limit=MAX_MEMORY >> 10)


def bounds_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is refused by these bounds; None when it keeps to them."""
    keywords = 0
    unevaluated: tuple[str, ...] | None = None
    patterned = False
    seen: set[str] = set()
    for path, node in _nodes(schema):
        keywords += len(node)
        if keywords > MAX_KEYWORDS:
            return msg.SCHEMA_TOO_MANY_KEYWORDS.format(limit=MAX_KEYWORDS)
        found = node.get("pattern")
        named = node.get("patternProperties")
        seen.update([found] if isinstance(found, str) else [])
        seen.update(named if isinstance(named, dict) else [])
        if len(seen) > MAX_PATTERNS:
            return msg.SCHEMA_TOO_MANY_PATTERNS.format(limit=MAX_PATTERNS)
        if isinstance(found, str) and (why := pattern_problem(found)) is not None:
            return _refused((*path, "pattern"), why)
        if isinstance(named, dict):
            patterned = True
            for name in named:
                if (why := pattern_problem(name)) is not None:
                    return _refused((*path, "patternProperties", name), why)
        if "unevaluatedProperties" in node and unevaluated is None:
            unevaluated = (*path, "unevaluatedProperties")
    if patterned and unevaluated is not None:
        return msg.SCHEMA_UNEVALUATED_PATTERNS.format(where=_where(unevaluated))
    return None
