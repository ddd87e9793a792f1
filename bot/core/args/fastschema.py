"""A quick "does it fit?" for the plain schemas most tools have, jsonschema's verdict kept.

Checking a call's arguments with jsonschema cost more than the rest of a free tool
call (bench/gate_overhead.py), and almost every tool's schema is the kind a type
signature gives: an object of typed properties, some required, maybe optional or a
list. `quick_check` turns such a schema into a plain Python predicate. It is only
ever trusted to say "fits": anything it says does not fit, and every schema it does
not understand (`None`), goes to jsonschema, which gives the verdict and the words.
A property test holds the predicate to jsonschema's own answers
(tests/core/test_fastschema.py).

Instances are plain JSON as `json.loads` gives it; semantics are Draft 2020-12's, as
jsonschema applies them without a format checker (formats are annotations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

# Keywords that never change the verdict (annotations), and those compiled below.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "format", "deprecated", "readOnly",
     "writeOnly", "$comment"}
)  # fmt: skip
_ASSERTIONS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "anyOf", "minLength",
     "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
)  # fmt: skip
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


_TYPES: dict[str, Check] = {
    "array": lambda x: isinstance(x, list),
    "boolean": lambda x: isinstance(x, bool),
    "integer": lambda x: _number(x) and (isinstance(x, int) or x.is_integer()),
    "null": lambda x: x is None,
    "number": _number,
    "object": lambda x: isinstance(x, dict),
    "string": lambda x: isinstance(x, str),
}


# Every alternative of an `anyOf` may check the same value, so their size multiplies
# the work of a long list: the quick check takes only small ones (pydantic's Optional[X]
# is two or three objects), and leaves the rest to jsonschema, whose steps are counted.
MAX_ANY_OF = 16


class _Unsupported(Exception):
    pass


def _objects(value: object) -> int:
    """How many JSON objects `value` holds, itself included."""
    if isinstance(value, list):
        return sum(_objects(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(_objects(v) for v in value.values())
    return 0


def quick_check(schema: Mapping[str, Any]) -> Check | None:
    """A predicate true only for instances jsonschema accepts; None: not a plain schema."""
    if schema.get("$schema", DRAFT_2020_12).rstrip("#") != DRAFT_2020_12:
        return None
    try:
        return _compile({k: v for k, v in schema.items() if k != "$schema"})
    except _Unsupported:
        return None


def _compile(schema: object) -> Check:
    if schema is True:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, dict) or not set(schema) <= _ANNOTATIONS | _ASSERTIONS:
        raise _Unsupported
    checks = [_type(schema["type"])] if "type" in schema else []
    checks += _object(schema) + _array(schema) + _bounds(schema)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if not isinstance(options, list) or not options or _objects(options) > MAX_ANY_OF:
            raise _Unsupported
        subs = [_compile(s) for s in options]
        checks.append(lambda x: any(c(x) for c in subs))
    return lambda x: all(c(x) for c in checks)


def _type(names: object) -> Check:
    listed = names if isinstance(names, list) else [names]
    if not listed or not all(isinstance(n, str) and n in _TYPES for n in listed):
        raise _Unsupported
    tests = [_TYPES[str(n)] for n in listed]
    return lambda x: any(t(x) for t in tests)


def _object(schema: dict[str, Any]) -> list[Check]:
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(required, list):
        raise _Unsupported
    if not all(isinstance(r, str) for r in required):
        raise _Unsupported
    subs = {name: _compile(s) for name, s in props.items()}
    extra_check = _compile(extra)

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True  # object keywords apply to objects only
        if any(r not in x for r in required):
            return False
        for k, v in x.items():
            sub = subs.get(k)
            if not (sub(v) if sub is not None else extra_check(v)):
                return False
        return True

    return [check] if props or required or extra is not True else []


def _array(schema: dict[str, Any]) -> list[Check]:
    if "items" not in schema:
        return []
    item = _compile(schema["items"])
    return [lambda x: not isinstance(x, list) or all(item(v) for v in x)]


def _length(n: int, longest: bool) -> Check:
    if longest:
        return lambda x: not isinstance(x, str) or len(x) <= n
    return lambda x: not isinstance(x, str) or len(x) >= n


def _limit(n: float, key: str) -> Check:
    if key == "minimum":
        return lambda x: not _number(x) or x >= n
    if key == "maximum":
        return lambda x: not _number(x) or x <= n
    if key == "exclusiveMinimum":
        return lambda x: not _number(x) or x > n
    return lambda x: not _number(x) or x < n


def _bounds(schema: dict[str, Any]) -> list[Check]:
    out: list[Check] = []
    for key in ("minLength", "maxLength"):
        if key in schema:
            n = schema[key]
            if not isinstance(n, int) or isinstance(n, bool):
                raise _Unsupported
            out.append(_length(n, key == "maxLength"))
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema:
            n = schema[key]
            if not _number(n):
                raise _Unsupported
            out.append(_limit(n, key))
    return out
