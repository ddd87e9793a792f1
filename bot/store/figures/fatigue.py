"""Reading the approval-fatigue history (bot/core/hindsight/fatigue.py) from the store: each
request's tier, arguments and card time beside its audit trail; and counting one
decision for /metrics as its transition's notice is read.

`CARD_AT` (bot/store/posted/cards.py) is written by the notifier as it saves a request's card,
first write wins: the moment the card was first shown to anyone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from redis.asyncio import Redis

from bot.core.hindsight.fatigue import Decided, decisions_of, report
from bot.core.hindsight.fatigue import Report as Report
from bot.core.models import AuditEntry
from bot.store import keys
from bot.store.posted.cards import CARD_AT
from bot.store.requests import RequestStore

# A request created up to this long before the window and decided inside it still
# counts: the longest default review chain is hours, not days.
LOOKBACK_MS = 86_400_000
FIELDS = ["risk", "args", CARD_AT, "created_at"]
# Seconds from card to a person's decision, by tier (/metrics histogram buckets).
BUCKETS = (1, 2, 5, 10, 30, 60, 300, 900, 3600, 14_400)
HELP = {
    "hitl_tier_decisions_total": "Decisions by risk tier and outcome, counted as they happen "
    "(approved and rejected: a person's, each approver of a quorum once; auto_approved, "
    "auto_rejected: the policy's default on timeout; no_review: approved at creation).",
    "hitl_card_decision_seconds": "Seconds from a request's card to a person's decision, "
    "by risk tier.",
    "hitl_too_fast_decisions_total": "People's decisions taken faster than the card can be "
    "read (2 s plus 0.3 s a line shown), by risk tier.",
}
HISTOGRAMS = frozenset({"hitl_card_decision_seconds"})


BATCH = 500  # requests read per round trip by the report and the App Home


def _decisions(
    rid: str, got: list[str | None], lines: list[str], version: int | None = None
) -> list[Decided]:
    risk, args, card_at, created = got
    if not risk or not args:
        return []  # gone (trimmed) between the index read and this one
    shown = int(card_at) if card_at else int(created) if created else None
    entries = [AuditEntry.parse(line) for line in lines]
    if version is not None:
        entries = [e for e in entries if e.version == version]
    return decisions_of(rid, risk, json.loads(args), shown, entries)


async def _request_history(redis: Redis, rid: str, version: int) -> list[Decided]:
    pipe = redis.pipeline(transaction=True)  # one slot: the request and its audit
    pipe.hmget(keys.request(rid), FIELDS)
    pipe.lrange(keys.audit(rid), 0, -1)
    got, lines = await pipe.execute()
    return _decisions(rid, got, lines, version)


async def history(
    store: RequestStore, since_ms: int, until_ms: int, *, limit: int | None = None
) -> list[Decided]:
    """Every decision taken in [since_ms, until_ms], from the requests that may hold one
    (`limit`: from the newest that many only), read `BATCH` requests a round trip."""
    rids = await store.ids_between(max(0, since_ms - LOOKBACK_MS), until_ms)
    rids = rids if limit is None else rids[-limit:]
    out: list[Decided] = []
    for start in range(0, len(rids), BATCH):
        batch = rids[start : start + BATCH]
        pipe = store.redis.pipeline(transaction=False)  # many slots: no MULTI
        for rid in batch:
            pipe.hmget(keys.request(rid), FIELDS)
            pipe.lrange(keys.audit(rid), 0, -1)
        got = await pipe.execute()
        for i, rid in enumerate(batch):
            found = _decisions(rid, got[2 * i], got[2 * i + 1])
            out += [d for d in found if since_ms <= d.at]
    return out


def archived(records: Iterable[dict[str, Any]], since_ms: int, until_ms: int) -> list[Decided]:
    """The decisions of requests retention archived (bot/store/archive.py), as `history`
    reads a live one's."""
    out: list[Decided] = []
    for rec in records:
        fields = rec["fields"]
        got = [fields.get(f) for f in FIELDS]
        found = _decisions(str(rec["id"]), got, list(rec["audit"]))
        out += [d for d in found if since_ms <= d.at <= until_ms]
    return out


async def figures(
    store: RequestStore,
    since_ms: int,
    now_ms: int,
    *,
    limit: int | None = None,
    archived_records: Iterable[dict[str, Any]] = (),
) -> Report:
    decided = archived(archived_records, since_ms, now_ms)
    decided += await history(store, since_ms, now_ms, limit=limit)
    return report(decided, since_ms=since_ms, now_ms=now_ms)


def _labels(**kv: str) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(kv.items())) + "}"


# The events that may carry a decision: others (claims, reports, cancels) read nothing.
DECIDING = frozenset({"create", "approve", "edit_and_approve", "reject", "timeout"})


async def count(redis: Redis, rid: str, event: str, version: int, incr: Counter[str]) -> None:
    """Add to `incr` the decision that the transition to `version` made, if it made one,
    read from that version's audit entry (so each approval of a quorum counts once)."""
    if event not in DECIDING:
        return
    for d in await _request_history(redis, rid, version):
        incr[f"hitl_tier_decisions_total{_labels(tier=d.tier, outcome=d.outcome)}"] += 1
        secs = d.seconds
        if secs is None:
            continue
        for le in BUCKETS:
            if secs <= le:
                incr[f"hitl_card_decision_seconds_bucket{_labels(tier=d.tier, le=str(le))}"] += 1
        incr[f"hitl_card_decision_seconds_bucket{_labels(tier=d.tier, le='+Inf')}"] += 1
        incr[f"hitl_card_decision_seconds_count{_labels(tier=d.tier)}"] += 1
        incr[f"hitl_card_decision_seconds_sum_ms{_labels(tier=d.tier)}"] += int(secs * 1000)
        if d.too_fast:
            incr[f"hitl_too_fast_decisions_total{_labels(tier=d.tier)}"] += 1
