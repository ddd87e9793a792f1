"""What plain JSON may hold here: how deep it nests, and text that UTF-8 can carry.

Both limits exist because the failures come late and far away otherwise: a
JSON text nested 100,000 deep makes `json.loads` raise RecursionError (not
ValueError), arguments nested 256 deep were stored and then broke every
response that serialised them, and a lone surrogate (`"\\ud800"`, valid JSON,
not encodable as UTF-8) parses fine and fails only when Redis or Slack
encodes it. So each is checked once, at the door, by these pure functions.

Depth counts containers: `{}` and `[]` are depth 1, `{"a": [1]}` depth 2;
scalars add nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON string, escapes included, in the unrolled form (linear, no backtracking).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_OPEN, _CLOSE = frozenset("[{"), frozenset("]}")


def _children(value: object) -> Iterator[object] | None:
    if isinstance(value, dict):
        return iter(value.values())
    if isinstance(value, list | tuple):
        return iter(value)
    return None


def too_deep(value: object, limit: int) -> bool:
    """True when `value` nests containers more than `limit` levels deep.

    Iterative, and it stops at the first container past the limit: it can
    never hit the recursion limit itself, whatever it is given."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = _children(item)
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def text_too_deep(text: str, limit: int) -> bool:
    """True when the JSON `text` opens more than `limit` brackets at once.

    Read before `json.loads`, which recurses. Brackets inside strings do not
    count; on text that is not JSON at all the answer is an upper bound, which
    only ever refuses text that `json.loads` would refuse too."""
    depth = 0
    for ch in _STRING.sub("", text):
        if ch in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif ch in _CLOSE:
            depth -= 1
    return False


def lone_surrogate(value: object) -> bool:
    """True when any string in `value`, dict keys included, holds a lone surrogate.

    `json.loads` joins a valid pair (`"\\ud83d\\ude00"`) into one code point,
    so any surrogate left in a parsed string is one that UTF-8 cannot encode."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False
