"""The archive directory: segments retention wrote (bot/core/proof/archive.py has the
format), the store's note of the newest one, and reading it all back for `audit
verify`, `audit export` and `report`.

A segment is written to a temporary name, flushed to disk and renamed into place, so a
reader sees a whole segment or none; the store is told of it only after that, and a
record leaves the store only after the store was told.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.core.proof.archive import SUFFIX, BadSegment, Segment, chain_order, parse
from bot.core.proof.seal import Verify
from bot.store import keys

NEWEST = keys.ARCHIVE_NEWEST


def segment_name(at_ms: int) -> str:
    # Sorted by name is oldest first, and two passes in one millisecond never collide.
    return f"segment-{at_ms:015d}-{secrets.token_hex(4)}{SUFFIX}"


def write_segment(directory: Path, name: str, text: str) -> Path:
    """`text` durably at `directory/name`: whole or not at all."""
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / name
    tmp = directory / f".{name}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be synced
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return final


async def newest(redis: Redis) -> tuple[str, str] | None:
    """(file name, sha256) of the newest segment the store was told of."""
    got = await redis.get(NEWEST)
    if not got:
        return None
    doc = json.loads(got)
    return str(doc["name"]), str(doc["sha"])


# Name a segment the newest only if the newest is still the one it follows: two passes
# that raced (a lease lost mid-way) cannot both extend the chain from the same segment.
# KEYS[1] the note; ARGV[1] the sha the new one follows ("" for the first), ARGV[2] the
# note to write. 1 if written, 0 if the newest moved meanwhile.
ADVANCE = """
local cur = redis.call('GET', KEYS[1])
local sha = ''
if cur then sha = cjson.decode(cur)['sha'] end
if sha ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""


async def advance(redis: Redis, prev: str, name: str, sha: str) -> bool:
    note = json.dumps({"name": name, "sha": sha})
    return bool(await redis.eval(ADVANCE, 1, NEWEST, prev, note))


@dataclass
class Archive:
    """Everything a directory holds, checked: the segments in chain order and the
    problems found (files that are not sealed segments, gaps, segments on no link)."""

    segments: list[Segment] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # sha -> file name
    problems: list[str] = field(default_factory=list)

    def _copies(self) -> dict[str, tuple[dict[str, Any], Segment]]:
        """Request id -> the copy that counts, with its segment: the one with the longest
        history when a pass that crashed half-way archived it twice (a tie: the later)."""
        best: dict[str, tuple[dict[str, Any], Segment]] = {}
        for seg in self.segments:
            for rec in seg.records:
                if rec.get("kind") != "request":
                    continue
                rid = str(rec["id"])
                if rid not in best or len(rec["audit"]) >= len(best[rid][0]["audit"]):
                    best[rid] = (rec, seg)
        return best

    def requests(self) -> Iterator[dict[str, Any]]:
        """Each request that left, once (`_copies`), oldest first."""
        recs = (rec for rec, _ in self._copies().values())
        yield from sorted(recs, key=lambda r: (created_at(r), str(r["id"])))

    def request(self, rid: str) -> tuple[dict[str, Any], Segment] | None:
        """The archived copy of `rid` that `requests` gives, with the segment holding
        it (when it left); None when it never left."""
        return self._copies().get(rid)


def created_at(rec: dict[str, Any]) -> int:
    """When an archived request was created (0 for a record that does not say)."""
    fields = rec.get("fields")
    try:
        return int(fields.get("created_at") or 0) if isinstance(fields, dict) else 0
    except (TypeError, ValueError):
        return 0


def read_one(path: Path, verify: Verify) -> Segment | None:
    try:
        return parse(path.read_text(encoding="utf-8"), verify)
    except (BadSegment, OSError, UnicodeDecodeError):
        return None


def written_after(directory: Path, name: str, verify: Verify) -> list[tuple[str, Segment]]:
    """The sealed segments named after `name` (so written later), oldest first."""
    if not directory.is_dir():
        return []
    out = []
    for path in sorted(directory.glob(f"segment-*{SUFFIX}")):
        if path.name > name and (seg := read_one(path, verify)) is not None:
            out.append((path.name, seg))
    return out


def read(directory: Path | None, verify: Verify, newest_sha: str | None) -> Archive:
    """The archive at `directory` (none there: empty), each segment checked against the
    keys in `verify` and the chain followed back from the store's newest."""
    out = Archive()
    if directory is None or not directory.is_dir():
        if newest_sha:
            out.problems.append(f"the archive {directory} is missing: the store names a segment")
        return out
    found: list[Segment] = []
    for path in sorted(directory.glob(f"segment-*{SUFFIX}")):
        try:
            seg = parse(path.read_text(encoding="utf-8"), verify)
        except (BadSegment, OSError, UnicodeDecodeError) as exc:
            out.problems.append(f"archive {path.name}: {exc}")
            continue
        found.append(seg)
        out.names[seg.sha] = path.name
    out.segments, gaps = chain_order(found, newest_sha)
    out.problems += gaps
    return out
