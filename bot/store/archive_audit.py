"""What `audit verify`, `audit export` and `audit heads` read of the archive: the same
checks as a live request's history (its links up to the head its segment sealed, its
seals, its order), and kept heads matched against what left as well as what stayed."""

from __future__ import annotations

import json
from collections.abc import Iterator

from bot.core.proof.chain import expand, line_hash, verify
from bot.core.proof.chain_order import order_problems
from bot.core.proof.seal import Verify, unsealed
from bot.store.archive import Archive, created_at
from bot.store.audit import Finding
from bot.store.heads import HeadFinding


def sealed_heads(found: Archive) -> dict[str, tuple[str, int]]:
    """Request id -> (head, seq) its newest segment sealed."""
    out: dict[str, tuple[str, int]] = {}
    for seg in found.segments:
        for h in seg.heads:
            if h.request_id not in out or h.seq >= out[h.request_id][1]:
                out[h.request_id] = (h.head, h.seq)
    return out


def chain_break(lines: list[str], sealed: tuple[str, int]) -> tuple[int, str] | None:
    """The first break (entry, why) of an archived history against the head (hash, seq)
    its segment sealed; None when the history is whole up to it."""
    head, seq = sealed
    broken = verify(lines, head)
    if broken is not None:
        return broken.seq, f"{broken.why} (archived)"
    if len(lines) != seq:
        return seq, f"archived with {len(lines)} entries, {seq} sealed"
    return None


def findings(found: Archive, trusted: Verify, since_ms: int = 0) -> Iterator[Finding]:
    """Each archived history that fails a check a live one would: first break of its
    chain against the sealed head, every decision without a valid seal, every entry out
    of order."""
    heads = sealed_heads(found)
    for rec in found.requests():
        rid, lines = str(rec["id"]), [str(x) for x in rec["audit"]]
        if created_at(rec) < since_ms:
            continue
        if (cut := chain_break(lines, heads.get(rid, ("", 0)))) is not None:
            yield Finding(rid, *cut)
        for s, why in unsealed(rid, lines, trusted):
            yield Finding(rid, s, f"{why} (archived)")
        version = str(rec["fields"].get("version", ""))
        for b in order_problems(lines, int(version) if version.isdigit() else None):
            yield Finding(rid, b.seq, f"{b.why} (archived)")


def export(found: Archive, live: set[str], since_ms: int = 0) -> Iterator[str]:
    """JSON lines as `audit export` writes a live request's, each marked `archived`;
    a request also still live (a pass stopped half-way) is left to the live copy."""
    for rec in found.requests():
        rid = str(rec["id"])
        if rid in live:
            continue
        for line in rec["audit"]:
            entry = expand(json.loads(line))
            if entry.get("at", 0) >= since_ms:
                yield json.dumps({"request_id": rid, "archived": True, **entry}, sort_keys=True)


def recheck_heads(
    found: Archive, gone: list[HeadFinding], kept: list[tuple[str, str, int]]
) -> list[HeadFinding]:
    """Of the kept heads the live store no longer holds, those the archive does not hold
    either, as it was: a request that left through retention is not "deleted"."""
    lines = {str(r["id"]): [str(x) for x in r["audit"]] for r in found.requests()}
    wanted = {rid: (head, seq) for rid, head, seq in kept}
    out: list[HeadFinding] = []
    for f in gone:
        got = lines.get(f.request_id)
        head, seq = wanted.get(f.request_id, ("", 0))
        if got is None or not f.why.startswith("deleted"):
            out.append(f)
        elif len(got) < seq:
            out.append(
                HeadFinding(
                    f.request_id, f"archived history cut short: {len(got)} entries, {seq} kept"
                )
            )
        elif line_hash(got[seq - 1]) != head:
            out.append(
                HeadFinding(
                    f.request_id, f"archived history rewritten: entry {seq} is not the one kept"
                )
            )
    return out
