"""What a chain's links cannot show: its entries out of order. Pure: takes the stored lines.

`chain.verify` proves each entry links to the one before it, but whoever rewrites a
history and recomputes every link (anyone who can write to Redis) makes any order link.
So the entries themselves are read too: a version never goes back (every move of one
transition records the version it led to; a refusal the one it found), an entry is never
recorded twice, and the request never stands at a version below the one its history
reached (a hash put back by hand to be decided or claimed again).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.core.proof.chain import Break

# What an entry records, not where it sits: two entries alike but for these are one
# entry written twice.
PLACE = ("seq", "prev")

BACKWARDS = "version {version} after version {top} at entry {at}: the version went backwards"
DUPLICATE = "repeats entry {first} ({what}): an entry recorded twice"
BEHIND = (
    "the request stands at version {version}, below version {top} "
    "its history reached at entry {at}: put back by hand"
)


def _what(entry: dict[str, Any]) -> str:
    return f"{entry.get('event')} by {entry.get('actor')} at version {entry.get('version')}"


def _duplicates(entries: list[tuple[int, str, dict[str, Any]]]) -> list[Break]:
    """Each entry that repeats an earlier one: the very same line, or a move of state
    that matches an earlier move in all but its place. (Refusals alike but for their
    place are legitimate: the same click twice in one millisecond.)"""
    found: list[Break] = []
    lines: dict[str, int] = {}
    moves: dict[str, int] = {}
    for i, line, entry in entries:
        body = json.dumps({k: v for k, v in entry.items() if k not in PLACE}, sort_keys=True)
        first = lines.get(line)
        if first is None and entry.get("kind") == "transition":
            first = moves.get(body)
        if first is not None:
            found.append(Break(i, DUPLICATE.format(first=first, what=_what(entry))))
        lines.setdefault(line, i)
        if entry.get("kind") == "transition":
            moves.setdefault(body, i)
    return found


def _backwards(entries: list[tuple[int, str, dict[str, Any]]]) -> tuple[list[Break], int, int]:
    """Each entry whose version is below one recorded before it; and the highest version
    recorded, with the entry it first appears at."""
    found: list[Break] = []
    top, at = 0, 0
    for i, _, entry in entries:
        version = entry.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            continue  # the entry's shape is the chain check's and the parser's concern
        if version < top:
            found.append(Break(i, BACKWARDS.format(version=version, top=top, at=at)))
        elif version > top:
            top, at = version, i
    return found, top, at


def order_problems(lines: Sequence[str], version: int | None = None) -> list[Break]:
    """Every entry of one chain out of order, by position (1-based, as `chain.verify`
    counts). `version`: the one the request stands at now (None: not checked)."""
    entries: list[tuple[int, str, dict[str, Any]]] = []
    for i, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # the chain check names it
        if isinstance(entry, dict):
            entries.append((i, line, entry))
    backwards, top, at = _backwards(entries)
    found = backwards + _duplicates(entries)
    if version is not None and version < top:
        found.append(Break(at, BEHIND.format(version=version, top=top, at=at)))
    return sorted(found, key=lambda b: b.seq)
