"""Questions with options: the bounds an option list keeps, and which option a reply names.

Pure: the API, the SDK (both modes), the worker and the MCP server check options here,
and the Slack card and the thread replies match answers here, so all refuse the same.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from bot import messages as msg

# Slack's button text holds 75 characters; more options than 10 stop being a choice a
# person reads at a glance (and one actions block holds 25 elements).
MAX_OPTIONS = 10
MAX_OPTION_CHARS = 75


def option_problem(options: Sequence[str]) -> str | None:
    """Why `options` cannot be offered, or None. An empty list means a free-text question."""
    if len(options) > MAX_OPTIONS:
        return msg.OPTIONS_TOO_MANY.format(n=len(options), max=MAX_OPTIONS)
    seen: set[str] = set()
    for i, option in enumerate(options):
        text = option.strip()
        if not text or option != text:
            return msg.OPTION_BLANK.format(n=i + 1)
        if len(option) > MAX_OPTION_CHARS:
            return msg.OPTION_TOO_LONG.format(n=i + 1, max=MAX_OPTION_CHARS)
        if any(unicodedata.category(c).startswith("C") for c in option):
            return msg.OPTION_CONTROL.format(n=i + 1)
        key = _key(option)
        if key in seen:
            return msg.OPTION_TWICE.format(n=i + 1)
        seen.add(key)
    return None


def matching_option(options: Sequence[str], text: str) -> str | None:
    """The option a free-text reply names (case and spacing aside), or None."""
    key = _key(text)
    return next((o for o in options if _key(o) == key), None)


def _key(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())
