"""A small JSON-Schema subset check for edited arguments, so a person's edit is
refused in the modal (with the reason) instead of failing later in the tool.

Covers what pydantic emits for plain tool signatures: object properties,
required, additionalProperties, and the basic types. Anything it does not know
it lets through; the tool's own validation still runs before execution.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def problems(schema: dict[str, Any], args: object) -> list[str]:
    """Human-readable reasons `args` does not fit `schema` (empty: it fits)."""
    if not isinstance(args, dict):
        return ['the arguments must be a JSON object, like {"amount": 10}']
    out: list[str] = []
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in args:
            out.append(f"{name} is required")
    if schema.get("additionalProperties") is False:
        out += [f"{name} is not an argument of this tool" for name in args if name not in props]
    for name, value in args.items():
        want = props.get(name, {}).get("type")
        if isinstance(want, str) and want in _TYPES and not _fits(value, want):
            out.append(f"{name} must be {want}, got {type(value).__name__}")
    return out


def _fits(value: object, want: str) -> bool:
    if isinstance(value, bool) and want in ("integer", "number"):
        return False  # JSON true is not a number, though Python's bool is an int
    return isinstance(value, _TYPES[want])
