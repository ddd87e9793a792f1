"""What plain JSON may hold here: how deep it nests, and text that UTF-8 can carry.

Both limits exist because the failures come late and far away otherwise: a
JSON text nested 100,000 deep makes `json.loads` raise RecursionError (not
ValueError), arguments nested 256 deep were stored and then broke every
response that serialised them, and a lone surrogate (`"\\ud800"`, valid JSON,
not encodable as UTF-8) parses fine and fails only when Redis or Slack
encodes it. So each is checked once, at the door, by these pure functions.

Integers are held to what a JSON number carries exactly: a double's 53-bit
mantissa, |n| <= 2**53. Python parses `-1` and 400 zeros as an exact int,
while JavaScript and most JSON libraries round it, and float() of it raises
OverflowError: one such argument, stored, broke every check and card that
treated it as a number (issue 41).

Depth counts containers: `{}` and `[]` are depth 1, `{"a": [1]}` depth 2;
scalars add nothing.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator

_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON string, escapes included, in the unrolled form (linear, no backtracking).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_OPEN, _CLOSE = frozenset("[{"), frozenset("]}")
# The largest magnitude a JSON number (an IEEE double) holds exactly, with every
# integer below it: Number.MAX_SAFE_INTEGER + 1 in JavaScript.
MAX_EXACT_INT = 2**53
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
MAX_PATH_SHOWN = 200  # characters of the path a refusal names


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


def _inexact(item: object) -> bool:
    # bool is an int too, and never large
    return isinstance(item, int) and not -MAX_EXACT_INT <= item <= MAX_EXACT_INT


def inexact_number(value: object) -> str | None:
    """Where in `value` an integer lies beyond what JSON carries exactly (|n| > 2**53),
    as a path (`amount`, `items[2].price`); None when there is none.

    Floats are left alone: whatever their size, they are doubles already, which JSON
    carries as they are (NaN and the infinities are refused where JSON is written).
    Every call filed walks its arguments here, so the walk keeps no paths; only a
    refusal walks again to name where."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif _inexact(item):
            return _path_to_inexact(value)
    return None


def _path_to_inexact(value: object) -> str:
    found: deque[tuple[object, str]] = deque([(value, "")])
    while found:
        item, path = found.popleft()  # breadth first: the shallowest is the one named
        if _inexact(item):
            return _shown(path) if path else "(the value)"
        if isinstance(item, dict):
            found.extend((v, _key(path, k)) for k, v in item.items())
        elif isinstance(item, list | tuple):
            found.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return "(the value)"


def _key(path: str, key: object) -> str:
    """`a.b` for a name, `a["x y"]` (JSON-quoted) for any other key, the empty one too."""
    name = str(key)
    if _NAME.fullmatch(name):
        return f"{path}.{name}" if path else name
    return f"{path}[{json.dumps(name, ensure_ascii=False)}]"


def _shown(path: str) -> str:
    # A key may be kilobytes long: the message names where, it never repeats the args.
    return path if len(path) <= MAX_PATH_SHOWN else path[: MAX_PATH_SHOWN - 1] + "…"
