"""Plain text cut to a size without breaking what it holds, and times as ISO 8601: what
every surface that shows a request (Slack's blocks, a page's body) shares."""

from __future__ import annotations

import re
from datetime import UTC, datetime

ELLIPSIS = "…"

# An entity (`&amp;`) or a hidden character's escape (`\u202e`) cut short at the end.
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,3}$|\\u[0-9a-f]{0,3}$")


def truncate(text: str, limit: int, marker: str = ELLIPSIS) -> str:
    """`text` if it fits in `limit` characters, else its start plus `marker`, `limit` at most.

    Never cuts an entity (`&amp;`, `&lt;`, `&gt;`) or a `\\u202e` escape in half, so it
    is safe on escaped text.
    """
    if len(text) <= limit:
        return text
    if limit <= len(marker):
        return marker[: max(limit, 0)]
    return head(text, limit - len(marker)) + marker


def head(text: str, n: int) -> str:
    """The first `n` characters at most, backed off so no entity or escape is cut in half."""
    cut = text[:n]
    m = _PARTIAL_ENTITY.search(cut)
    return cut[: m.start()] if m else cut


def iso(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC, to the second."""
    try:
        return datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return str(ms)
