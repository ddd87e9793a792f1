"""The fatigue figures as pure functions: the reading floor, the lines a card shows, the
nearest-rank percentiles, and which audit entries are decisions."""

from __future__ import annotations

import json

from bot.core.hindsight.fatigue import (
    WEEK_MS,
    Decided,
    decisions_of,
    lines_shown,
    percentile,
    reading_floor,
    report,
)
from bot.core.models import AuditEntry


def _entry(
    seq: int, event: str, to: str, actor: str = "UANA", kind: str = "transition"
) -> AuditEntry:
    raw = {"seq": seq, "at": seq * 1000, "actor": actor, "kind": kind, "event": event}
    return AuditEntry.parse(json.dumps(raw | {"to": to, "version": seq}))


def test_a_card_of_more_lines_needs_longer_to_read() -> None:
    assert lines_shown({}) == 1  # the tool's line
    assert lines_shown({"amount": 5, "to": "c-1"}) == 3
    assert lines_shown({"rows": [1, 2]}) == 1 + 4  # "[", two items, "]"
    assert reading_floor(3) == 2.9
    fast = Decided("r", "medium", "approved", at=2_899, actor="U", shown_at=0, lines=3)
    read = Decided("r", "medium", "approved", at=2_900, actor="U", shown_at=0, lines=3)
    assert fast.too_fast and not read.too_fast


def test_the_policy_never_decides_too_fast() -> None:
    auto = Decided("r", "low", "auto_approved", at=0, shown_at=0)
    assert auto.seconds is None and not auto.too_fast


def test_percentiles_are_times_someone_took() -> None:
    assert percentile([], 0.5) is None
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.9) == 4.0


def test_which_audit_entries_are_decisions() -> None:
    trail = [
        _entry(1, "create", "pending_review", actor="UAGENT"),
        _entry(2, "approve", "pending_review"),  # one of a quorum of two
        _entry(3, "approve", "approved", actor="UBOB"),
        _entry(4, "approve", "approved", actor="UCAT", kind="refused"),
        _entry(5, "claim", "executing", actor="system"),
    ]
    got = decisions_of("r", "critical", {"v": 1}, 500, trail)
    assert [(d.outcome, d.actor, d.seconds) for d in got] == [
        ("approved", "UANA", 1.5),
        ("approved", "UBOB", 2.5),
    ]
    exempt = [_entry(1, "create", "pending_review"), _entry(2, "approve", "approved", "system")]
    assert [d.outcome for d in decisions_of("r", "low", {}, None, exempt)] == ["no_review"]
    timed_out = [_entry(1, "timeout", "auto_rejected", actor="system")]
    assert [d.outcome for d in decisions_of("r", "high", {}, 0, timed_out)] == ["auto_rejected"]


def test_busiest_approver_and_weeks() -> None:
    now = 10 * WEEK_MS
    made = [
        Decided("a", "high", "approved", now - 1000, "UANA", now - 9000),
        Decided("b", "high", "rejected", now - 2000, "UBOB", now - 9000),
        Decided("c", "high", "approved", now - 3000, "UANA", now - 9000),
        Decided("d", "high", "auto_rejected", now - WEEK_MS - 1),
        Decided("e", "high", "approved", now - 3 * WEEK_MS, "UOLD", now - 3 * WEEK_MS),
    ]
    got = report(made, since_ms=now - 2 * WEEK_MS, now_ms=now)
    assert got.tiers["high"].busiest == ("UANA", 2 / 3)
    assert len(got.weeks) == 2
    assert got.weeks[0]["high"]["approved"] == 2 and got.weeks[1]["high"]["auto_rejected"] == 1
    assert "UOLD" not in got.tiers["high"].approvers
