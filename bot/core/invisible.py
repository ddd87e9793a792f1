"""Characters that change what a person reads without changing what runs, made visible.

A bidi control reorders the text after it (U+202E makes "\\u202e12345" read
54321); a zero-width character hides the difference between two names that
look alike. Neither belongs in a call a person is asked to approve as shown.
Every format (Cf) and control (Cc) character but newline and tab, plus lone
surrogates and the line and paragraph separators, is shown as its JSON escape
(`\\u202e`): inside the JSON of an argument that reads exactly as the payload
means it, and it parses back to the same character.

`escape.mrkdwn` and `escape.plain` run everything through `visible`, so no
untrusted text reaches Slack with such a character in it; `hidden_in` tells a
renderer when to add the warning line.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

_HIDDEN_CATEGORIES = frozenset({"Cf", "Cc", "Cs", "Zl", "Zp"})
_KEEP = frozenset("\n\t")
# Planes 3-13 hold no assigned characters and 15-16 only private use: skipping them
# keeps the one-time scan below short (about a fifth of all code points).
_SCANNED = (range(0, 0x40000), range(0xE0000, 0xE1000))


@functools.cache
def _pattern() -> re.Pattern[str]:
    """One character class with every hidden character of this Python's Unicode version."""
    ranges: list[tuple[int, int]] = []
    for span in _SCANNED:
        for cp in span:
            ch = chr(cp)
            if ch in _KEEP or unicodedata.category(ch) not in _HIDDEN_CATEGORIES:
                continue
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    body = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    return re.compile(f"[{body}]")


def _escape(m: re.Match[str]) -> str:
    cp = ord(m.group())
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    cp -= 0x10000  # JSON spells a character beyond the BMP as a surrogate pair
    return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"


def visible(text: str) -> str:
    """`text` with every hidden character spelled as its escape (`\\u202e`)."""
    if text.isprintable():  # fast path: no Cc, Cf, Cs, Zl or Zp in it
        return text
    return _pattern().sub(_escape, text)


def has_hidden(text: str) -> bool:
    return not text.isprintable() and _pattern().search(text) is not None


def hidden_in(value: Any) -> bool:
    """Whether any string in `value` (keys included, at any depth) holds a hidden character."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_hidden(item):
                return True
        elif isinstance(item, dict):
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, list | tuple | set | frozenset):
            stack += item
    return False
