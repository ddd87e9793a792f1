"""The audit chain check: every way of rewriting history without recomputing it is caught."""

from __future__ import annotations

import json

from bot.core.proof.chain import GENESIS, expand, line_hash, verify


def chain(n: int) -> tuple[list[str], str]:
    """`n` linked entries as the Lua script writes them, and the head the request keeps."""
    lines, prev = [], GENESIS
    for seq in range(1, n + 1):
        line = json.dumps({"seq": seq, "prev": prev, "event": f"e{seq}"}, separators=(",", ":"))
        lines.append(line)
        prev = line_hash(line)
    return lines, prev


def relinked(entries: list[dict[str, object]]) -> tuple[list[str], str]:
    """Re-chain edited entries: a forger who recomputes every link and the head."""
    lines, prev = [], GENESIS
    for e in entries:
        line = json.dumps({**e, "prev": prev}, separators=(",", ":"))
        lines.append(line)
        prev = line_hash(line)
    return lines, prev


def test_an_intact_chain_passes() -> None:
    lines, head = chain(4)
    assert verify(lines, head) is None


def test_a_request_with_no_entries_and_no_head_passes() -> None:
    assert verify([], "") is None


def test_an_edited_middle_entry_is_named() -> None:
    lines, head = chain(4)
    lines[1] = lines[1].replace('"e2"', '"forged"')
    broken = verify(lines, head)
    assert broken is not None and broken.seq == 2
    # The operator reads this line in `hitl-bot audit verify`'s output.
    assert broken.why == "hash of this entry does not match the next link"


def test_an_edited_last_entry_is_caught_by_the_head() -> None:
    lines, head = chain(3)
    lines[2] = lines[2].replace('"e3"', '"forged"')
    broken = verify(lines, head)
    assert broken is not None and broken.seq == 3 and "head" in broken.why


def test_a_deleted_last_entry_is_caught_by_the_head() -> None:
    lines, head = chain(3)
    broken = verify(lines[:-1], head)
    assert broken is not None
    assert broken.why == "last entry does not match the head kept in the request"


def test_a_truncated_chain_is_caught() -> None:
    lines, head = chain(5)
    broken = verify(lines[:2], head)
    assert broken is not None and broken.seq == 2


def test_deleting_every_entry_is_caught() -> None:
    _, head = chain(3)
    broken = verify([], head)
    assert broken is not None and broken.seq == 1
    assert broken.why == "the audit list is empty but the request names a last entry"


def test_a_deleted_middle_entry_is_caught() -> None:
    lines, head = chain(4)
    broken = verify([lines[0], lines[2], lines[3]], head)
    assert broken is not None and broken.seq == 1


def test_reordered_entries_are_caught() -> None:
    lines, head = chain(4)
    broken = verify([lines[0], lines[2], lines[1], lines[3]], head)
    assert broken is not None and broken.seq <= 2


def test_a_wrong_head_is_caught_even_when_every_link_holds() -> None:
    lines, _ = chain(3)
    broken = verify(lines, "f" * 40)
    assert broken is not None and broken.seq == 3


def test_a_missing_head_is_caught() -> None:
    lines, _ = chain(3)
    assert verify(lines, "") is not None


def test_a_gap_in_seq_is_caught_even_when_links_and_head_were_recomputed() -> None:
    # The forger dropped entry 2 and re-chained the rest, but left the numbers as they were.
    entries = [json.loads(line) for line in chain(4)[0]]
    lines, head = relinked([entries[0], entries[2], entries[3]])
    broken = verify(lines, head)
    assert broken is not None and broken.seq == 2
    assert "sequence number 3 where 2 was expected" in broken.why


def test_an_entry_that_is_not_json_is_named() -> None:
    lines, head = chain(3)
    lines[1] = "{not json"
    broken = verify(lines, head)
    assert broken is not None and broken.seq == 2 and broken.why == "entry is not valid JSON"


def compact(n: int) -> tuple[list[str], str]:
    """`n` linked entries as the Lua script writes them: the first without `prev`."""
    lines, prev = [], GENESIS
    for seq in range(1, n + 1):
        link = {"prev": prev} if seq > 1 else {}
        line = json.dumps({"seq": seq, **link, "event": f"e{seq}"}, separators=(",", ":"))
        lines.append(line)
        prev = line_hash(line)
    return lines, prev


def test_a_first_entry_stored_without_its_zero_link_passes() -> None:
    lines, head = compact(3)
    assert '"prev"' not in lines[0] and verify(lines, head) is None


def test_a_later_entry_without_a_link_is_a_break_even_when_the_rest_is_rechained() -> None:
    lines, _ = compact(3)
    second = json.loads(lines[1])
    del second["prev"]
    lines[1] = json.dumps(second, separators=(",", ":"))
    lines[2] = json.dumps({**json.loads(lines[2]), "prev": line_hash(lines[1])})
    broken = verify(lines, line_hash(lines[2]))
    assert broken is not None and broken.seq == 2
    assert broken.why == "entry has no link to the entry before it"


def test_a_dropped_first_entry_of_a_compact_chain_is_caught() -> None:
    lines, head = compact(3)
    broken = verify(lines[1:], head)
    assert broken is not None and broken.seq == 1


def test_an_entry_that_is_json_but_no_object_is_named() -> None:
    lines, head = compact(2)
    broken = verify([lines[0], "[1]"], head)
    assert broken is not None and broken.seq == 2 and broken.why == "entry is not a JSON object"


OLD_FIRST = {
    "kind": "transition",
    "event": "create",
    "seq": 1,
    "prev": GENESIS,
    "actor": "U1",
    "from": "",
    "to": "pending_review",
    "reason_code": "",
    "payload_hash": "ab",
    "at": 1,
    "version": 1,
}


def test_expand_gives_back_an_entry_as_an_earlier_release_stored_it() -> None:
    stored = {k: v for k, v in OLD_FIRST.items() if v not in ("", GENESIS)}
    assert expand(stored) == OLD_FIRST
    assert expand(OLD_FIRST) == OLD_FIRST
    refusal = {"kind": "refused", "event": "approve", "seq": 2, "prev": "f" * 40}
    assert expand(refusal) == refusal | dict.fromkeys(
        ("actor", "from", "to", "payload_hash", "reason_code", "view_hash"), ""
    )
    # A transition's reason and text were stored on some paths only: nothing is invented.
    claim = {"kind": "transition", "event": "claim", "seq": 3, "prev": "f" * 40}
    assert set(expand(claim)) == set(claim) | {"actor", "from", "to", "payload_hash"}
