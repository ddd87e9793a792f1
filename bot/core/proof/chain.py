"""Verifying a request's hash-chained audit list, and reading its entries. Pure: takes
the stored lines."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

GENESIS = "0" * 40  # the link into a first entry, which is stored without `prev`

# The keys every entry of a group carries, empty or not: "*" every entry, then by its
# kind ("refused") or its event ("create"). Only these are left out of storage when
# empty (the Lua `audit` helper renders this table), and `expand` puts them back.
# Other keys (a transition's reason_code, text, view_hash) are written on some paths
# only, so theirs stay stored even empty.
ALWAYS: dict[str, tuple[str, ...]] = {
    "*": ("actor", "from", "to", "payload_hash"),
    "refused": ("reason_code", "view_hash"),
    "create": ("reason_code",),
}


def line_hash(line: str) -> str:
    # sha1 because the entry is chained inside a Lua script, where it is the only hash.
    return hashlib.sha1(line.encode()).hexdigest()


def expand(entry: dict[str, Any]) -> dict[str, Any]:
    """A decoded entry with what storage left out put back: the empty values and a first
    entry's zero `prev`. An entry stored whole comes back unchanged."""
    full = dict(entry)
    for group in ("*", str(entry.get("kind")), str(entry.get("event"))):
        for key in ALWAYS.get(group, ()):
            full.setdefault(key, "")
    if entry.get("seq") == 1:
        full.setdefault("prev", GENESIS)
    return full


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
        if not isinstance(entry, dict):
            return Break(i, "entry is not a JSON object")
        if "prev" not in entry and i > 1:
            # Only a first entry is stored without its link (the zero one).
            return Break(i, "entry has no link to the entry before it")
        if entry.get("prev", GENESIS) != prev:
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
