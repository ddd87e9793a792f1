"""Verifying a request's hash-chained audit list. Pure: takes the stored lines."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

GENESIS = "0" * 40


def line_hash(line: str) -> str:
    # sha1 because the entry is chained inside a Lua script, where it is the only hash.
    return hashlib.sha1(line.encode()).hexdigest()


@dataclass(frozen=True)
class Break:
    seq: int  # 1-based position of the first entry that cannot be trusted
    why: str


def verify(lines: list[str], head: str) -> Break | None:
    """The first broken entry of one chain, or None if every link and the head match."""
    prev = GENESIS
    for i, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            return Break(i, "entry is not valid JSON")
        if entry.get("prev") != prev:
            # The link into entry i is wrong: entry i-1 was altered, or i was forged.
            return Break(max(1, i - 1), "hash of this entry does not match the next link")
        if entry.get("seq") != i:
            return Break(i, f"sequence number {entry.get('seq')} where {i} was expected")
        prev = line_hash(line)
    if not lines and head:
        # Deleting every entry leaves nothing to link, but the request still names its last one.
        return Break(1, "the audit list is empty but the request names a last entry")
    if prev != (head or GENESIS):
        return Break(len(lines), "last entry does not match the head kept in the request")
    return None
