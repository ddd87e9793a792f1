"""Prometheus metrics: cluster-wide counters kept in Redis, gauges read at scrape time.

Counters come from the event stream through their own consumer group, each
entry counted and acknowledged in one MULTI, so every transition is counted
exactly once however many `serve` processes run. The counters live beside each
shard's stream (one hash per hash tag, so that MULTI stays in one slot on Redis
Cluster) and are summed at scrape time; every instance reports the
same cluster-wide totals (use max() across instances, not sum()). Slack API
retries are per process, like any client-side counter.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from bot.db.hub import hub_for
from bot.db.replicas import COUNTS as ACKS
from bot.store import keys, pending_count
from bot.store.figures import fatigue, shadow
from bot.store.posted import pages, parked, refused
from bot.store.stream.events import EventBus, Notice

log = logging.getLogger(__name__)

GROUP = "metrics"
# Seconds from a request's creation to a person's (or the policy's) decision.
BUCKETS = (1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 14_400)
SLACK_RETRIES: Counter[str] = Counter()  # this process's Web API retries, by reason
FORGED: Counter[str] = Counter()  # this process's refusals of forged records, by kind

HELP = {
    "hitl_requests_created_total": "Approval requests created.",
    "hitl_decisions_total": "Requests that left review, by outcome.",
    "hitl_rejections_total": "Rejections by a person, by reason code.",
    "hitl_timeouts_total": "Deadlines that fired, by the state they led to.",
    "hitl_escalations_total": "Requests moved to the next escalation level.",
    "hitl_auto_resolutions_total": "Requests decided by the policy default, by outcome.",
    "hitl_executions_total": "Executions that finished, by outcome.",
    "hitl_decision_seconds": "Time from request to decision.",
    "hitl_webhook_dead_letters_total": "Webhook events given up on after every retry, "
    "by webhook (HITL_WEBHOOKS).",
    "hitl_trace_dead_letters_total": "Request spans that could not be built after every retry.",
    **shadow.HELP,
    **fatigue.HELP,
    **pages.HELP,
    **parked.HELP,
    **refused.HELP,
}
HISTOGRAMS = frozenset({"hitl_decision_seconds", *fatigue.HISTOGRAMS})


def _labels(**kv: str) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(kv.items()))
    return f"{{{inner}}}" if inner else ""


class MetricsCollector:
    def __init__(self, redis: Redis, *, consumer: str, block_ms: int = 1_000) -> None:
        self.redis = redis
        self.block_ms = block_ms
        self.bus = EventBus(redis, GROUP)
        self.consumer = consumer

    async def run(self, stop: asyncio.Event) -> None:
        """Count until `stop` is set. An error raises: run it under a Supervisor
        (bot/supervise.py), which logs it once and starts this again after a backoff,
        so metrics never take the server down and never fail unseen."""
        await self.bus.ensure_group()
        while not stop.is_set():
            try:
                batch = await self.bus.reclaim(self.consumer, min_idle_ms=30_000)
                batch += await self.bus.read(self.consumer, block_ms=self.block_ms)
            except ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                await self.bus.ensure_group()  # a flushed or replaced Redis
                continue
            for n in batch:
                try:
                    await self.count(n)
                except RedisError:
                    raise  # the store's trouble: the Supervisor starts this again
                except Exception:
                    # A notice no count can be made of (a record an older version wrote)
                    # would raise on every retry and stop every count after it.
                    log.exception("metrics skipped %s %s %s", n.kind, n.id, n.event)
                    await self.bus.ack(n)

    async def count(self, n: Notice) -> None:
        incr: Counter[str] = Counter()
        if n.kind == "request":
            await self._request(n, incr)
            # By tier, from the audit entry: bot/store/figures/fatigue.py
            await fatigue.count(self.redis, n.id, n.event, n.version, incr)
        pipe = self.redis.pipeline(transaction=True)
        counters = keys.metrics(keys.shard_of_key(n.stream))
        for field, by in incr.items():
            pipe.hincrby(counters, field, by)
        pipe.xack(n.stream, GROUP, n.entry_id)
        await pipe.execute()

    async def _request(self, n: Notice, incr: Counter[str]) -> None:
        ev, state = n.event, n.state
        if ev == "create":
            incr["hitl_requests_created_total"] += 1
            await shadow.count(self.redis, n.id, incr)
        if ev == "timeout":
            incr[f"hitl_timeouts_total{_labels(to=state)}"] += 1
            if state == "pending_review":
                incr["hitl_escalations_total"] += 1
            elif state in ("auto_rejected", "auto_approved"):
                incr[f"hitl_auto_resolutions_total{_labels(outcome=state)}"] += 1
        if state in ("completed", "rolled_back", "manual_intervention") and ev != "timeout":
            incr[f"hitl_executions_total{_labels(outcome=state)}"] += 1
        decided = (ev in ("approve", "edit_and_approve") and state == "approved") or (
            ev == "reject" or (ev == "timeout" and state.startswith("auto_"))
        )
        if not decided and not (ev == "create" and state == "approved"):
            return
        created, at, reason = cast(
            list[str | None],
            await self.redis.hmget(keys.request(n.id), ["created_at", "res_at", "res_reason"]),
        )
        outcome = "rejected" if ev == "reject" else state
        incr[f"hitl_decisions_total{_labels(outcome=outcome)}"] += 1
        if ev == "reject":
            incr[f"hitl_rejections_total{_labels(reason=reason or 'none')}"] += 1
        if created and at:
            secs = max(0, int(at) - int(created)) / 1000
            for le in BUCKETS:
                if secs <= le:
                    incr[f'hitl_decision_seconds_bucket{{le="{le}"}}'] += 1
            incr['hitl_decision_seconds_bucket{le="+Inf"}'] += 1
            incr["hitl_decision_seconds_count"] += 1
            incr["hitl_decision_seconds_sum_ms"] += int(secs * 1000)


async def render(redis: Redis, *, slack_group: str = "slack") -> str:
    """The Prometheus text exposition."""
    raw: Counter[str] = Counter()
    for key in (keys.metrics(s) for s in range(keys.SHARDS)):
        for field, got in cast(dict[str, str], await redis.hgetall(key)).items():
            raw[field] += int(got)
    lines: list[str] = []
    families: dict[str, list[str]] = {}
    for field, value in sorted(raw.items()):
        name, brace, labels = field.partition("{")
        if name.endswith("_seconds_sum_ms"):  # kept in whole ms: HINCRBY counts integers
            family = name.removesuffix("_sum_ms")
            families.setdefault(family, []).append(f"{family}_sum{brace}{labels} {value / 1000}")
            continue
        family = name.removesuffix("_bucket").removesuffix("_count")
        families.setdefault(family, []).append(f"{field} {value}")
    for family, rows in families.items():
        kind = "histogram" if family in HISTOGRAMS else "counter"
        lines += [f"# HELP {family} {HELP.get(family, family)}", f"# TYPE {family} {kind}", *rows]
    lines += [
        "# HELP hitl_pending_requests Requests waiting for a person, by risk tier.",
        "# TYPE hitl_pending_requests gauge",
    ]
    for tier, count in (await pending_count.by_tier(redis)).items():
        lines.append(f"hitl_pending_requests{_labels(tier=tier)} {count}")
    lines += [
        "# HELP hitl_outbox_depth Slack notifications not yet delivered.",
        "# TYPE hitl_outbox_depth gauge",
        f"hitl_outbox_depth {await EventBus(redis, slack_group).backlog()}",
        "# HELP hitl_waiters Long-polls and SDK waits this process holds open.",
        "# TYPE hitl_waiters gauge",
        f"hitl_waiters {hub_for(redis).waiting}",
        "# HELP hitl_slack_api_retries_total Slack Web API retries by this process.",
        "# TYPE hitl_slack_api_retries_total counter",
    ]
    for reason in ("ratelimited", "server_error", "connection"):
        lines.append(
            f"hitl_slack_api_retries_total{_labels(reason=reason)} {SLACK_RETRIES[reason]}"
        )
    lines += [
        "# HELP hitl_replica_acks_total Transitions the replicas confirmed in time "
        "(HITL_REPLICA_ACKS), and those they did not, by this process.",
        "# TYPE hitl_replica_acks_total counter",
    ]
    for outcome in ("confirmed", "timeout"):
        lines.append(f"hitl_replica_acks_total{_labels(outcome=outcome)} {ACKS[outcome]}")
    lines += [
        "# HELP hitl_forged_grants_total Standing approvals this process refused to pass "
        "under: unsigned, not signed by serve's key, or without their source approval.",
        "# TYPE hitl_forged_grants_total counter",
        f"hitl_forged_grants_total {FORGED['grant']}",
    ]
    return "\n".join(lines) + "\n"


def count_retry(reason: str) -> None:
    SLACK_RETRIES[reason] += 1


def count_forged_grant() -> None:
    FORGED["grant"] += 1
