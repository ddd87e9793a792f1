"""The archive's segment format: what retention writes before a record leaves the live
store, and what `audit verify` checks afterwards. Pure: the bytes and the checks are
here; the files and the keys are the caller's.

A segment is a text file of JSON lines. Every line but the last is one record that left
(`kind` "request", "run" or "question", its fields and its audit lines). The last line is the seal:
the segment's count, the sha256 of the lines above it, the chain heads of the requests
it holds, the sha256 of the segment before it (`prev`, empty for the first), the time,
and serve's signature over all of that. So a segment cannot be edited, cut short or
dropped from the middle of the archive without `audit verify` naming it: its own hash
is the next one's `prev`, and the store keeps the newest's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.proof.seal import Verify, b64, unb64

ARCHIVE_DOMAIN = "hitl-archive/1"  # changes whenever the signed bytes do
SUFFIX = ".jsonl"


class BadSegment(ValueError):
    """A file that is not a whole segment this bot's key sealed."""


@dataclass(frozen=True)
class Head:
    request_id: str
    head: str  # sha1 of the request's last audit line
    seq: int


@dataclass(frozen=True)
class Segment:
    sha: str  # sha256 of the whole file: the next segment's `prev`
    prev: str
    at: int
    key_id: str
    records: list[dict[str, Any]]
    heads: list[Head]


def file_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _signed(key_id: str, at: int, prev: str, body_sha: str, n: int, heads: Sequence[Head]) -> bytes:
    rows = sorted([h.request_id, h.head, h.seq] for h in heads)
    fields = [ARCHIVE_DOMAIN, key_id, at, prev, body_sha, n, rows]
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=True).encode()


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def build(
    records: Sequence[dict[str, Any]],
    heads: Sequence[Head],
    *,
    prev: str,
    at: int,
    key_id: str,
    sign: Callable[[bytes], bytes],
) -> str:
    """The text of a segment holding `records`, sealed after the one whose hash is `prev`."""
    body = "".join(_line(dict(r)) + "\n" for r in records)
    body_sha = file_sha(body)
    seal = {
        "kind": "seal",
        "format": ARCHIVE_DOMAIN,
        "key_id": key_id,
        "at": at,
        "prev": prev,
        "body": body_sha,
        "n": len(records),
        "heads": [[h.request_id, h.head, h.seq] for h in heads],
        "signature": b64(sign(_signed(key_id, at, prev, body_sha, len(records), heads))),
    }
    return body + _line(seal) + "\n"


def parse(text: str, verify: Verify) -> Segment:
    """The segment in `text`, or BadSegment saying what is wrong with it."""
    if not text.endswith("\n"):
        raise BadSegment("cut short: it does not end with its seal line")
    body, _, last = text[:-1].rpartition("\n")
    body = body + "\n" if body else ""
    try:
        seal = json.loads(last)
        kid, at, prev = str(seal["key_id"]), int(seal["at"]), str(seal["prev"])
        n, body_sha = int(seal["n"]), str(seal["body"])
        heads = [Head(str(r), str(h), int(s)) for r, h, s in seal["heads"]]
        sig = unb64(str(seal["signature"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise BadSegment(f"its last line is not a seal ({exc})") from None
    if seal.get("kind") != "seal" or seal.get("format") != ARCHIVE_DOMAIN:
        raise BadSegment("its last line is not a seal")
    if not verify(kid, _signed(kid, at, prev, body_sha, n, heads), sig):
        raise BadSegment(f"its seal is not signed by a trusted key (key {kid})")
    if file_sha(body) != body_sha:
        raise BadSegment("its records are not the ones sealed: edited since it was written")
    try:
        records = [json.loads(line) for line in body.splitlines()]
    except ValueError as exc:
        raise BadSegment(f"a record is not JSON ({exc})") from None
    if len(records) != n:
        raise BadSegment(f"{len(records)} records, {n} sealed")
    return Segment(file_sha(text), prev, at, kid, records, heads)


def chain_order(segments: Sequence[Segment], newest: str | None) -> tuple[list[Segment], list[str]]:
    """The segments oldest first, following each one's `prev` back from `newest` (the hash
    the store keeps); and what is wrong: a link to a segment that is not there, a segment
    on no link, a newest that is missing."""
    by_sha = {s.sha: s for s in segments}
    problems: list[str] = []
    if newest:
        # A pass that crashed between writing its segment and naming it in the store
        # left one whose `prev` is the newest: its records are still in the store, and
        # the next pass adopts it. Not a gap.
        after = {s.prev: s.sha for s in segments}
        walked = {newest}
        while newest in after and after[newest] not in walked:
            newest = after[newest]
            walked.add(newest)
    chain: list[Segment] = []
    at = newest
    if newest and newest not in by_sha:
        problems.append(f"the newest segment the store names ({newest[:12]}) is missing")
        at = None
    if at is None and newest is None and segments:
        # No store to name the newest (an archive read alone): the one nobody follows.
        followed = {s.prev for s in segments}
        tips = [s for s in segments if s.sha not in followed]
        at = max(tips, key=lambda s: s.at).sha if tips else None
    seen: set[str] = set()
    while at and at in by_sha and at not in seen:
        seen.add(at)
        chain.append(by_sha[at])
        at = by_sha[at].prev
    if at and at not in seen:
        problems.append(f"a segment is missing: {at[:12]}, the one before {chain[-1].sha[:12]}")
    for s in segments:
        if s.sha not in seen:
            problems.append(f"segment {s.sha[:12]} is on no link from the newest")
    return list(reversed(chain)), problems
