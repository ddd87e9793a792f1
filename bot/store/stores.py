"""Every store over one connection: what the layers above hold instead of a client.

`StoreSet` is the door to Redis. Each part is a named store with named methods (key
names in `keys.py`, scripts beside their store); what runs in the background (the
event bus, the run queue, leases, metrics, trimming) is made here too, so nothing
outside `bot.store` ever holds the client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from bot.clock import Clock, wall_ms
from bot.core.models import ActionRequest, AuditEntry
from bot.core.proof.chain import Break
from bot.db import durability
from bot.db.hub import hub_for
from bot.db.lease import Lease
from bot.db.replicas import acks_for
from bot.signing import Signer
from bot.store import audit, heads, keys, pending_count
from bot.store.figures import metrics
from bot.store.grants import GrantStore
from bot.store.posted import parked
from bot.store.posted.cards import Cards
from bot.store.posted.digests import Digests
from bot.store.posted.pages import PageMarks
from bot.store.posted.refused import RefusalMarks
from bot.store.posted.slack_cache import SlackCache
from bot.store.requests import RequestStore
from bot.store.run.agents import AgentDirectory
from bot.store.run.owners import RunOwners
from bot.store.run.questions import QuestionStore
from bot.store.run.run_audit import RunAudit
from bot.store.run.run_queue import RunQueue
from bot.store.run.runs import RunStore
from bot.store.run.steering import SteeringStore
from bot.store.run.threads import ThreadIndex
from bot.store.stream.events import EventBus, Notice, notifier_read_within
from bot.store.stream.events_trim import EventTrimmer
from bot.store.stream.group_reader import GroupReader, Handle, Retry
from bot.store.tools import ToolSchemas


class StoreSet:
    def __init__(
        self,
        redis: Redis,
        *,
        clock: Clock = wall_ms,
        signer: Signer | None = None,
    ) -> None:
        """`signer`: serve's key (serve alone passes it): the request store seals decisions."""
        self._redis = redis
        self.clock = clock
        self.requests = RequestStore(redis, clock=clock, signer=signer)
        self.questions = QuestionStore(redis, clock=clock)
        self.steering = SteeringStore(redis, clock=clock)
        self.runs = RunStore(redis, clock=clock)
        self.run_audit = RunAudit(redis)
        self.owners = RunOwners(redis)
        self.refused = RefusalMarks(redis)  # Slack refusals a person can fix
        self.tools = ToolSchemas(redis)
        self.cards = Cards(redis)
        self.pages = PageMarks(redis)
        self.digests = Digests(redis)
        self.threads = ThreadIndex(redis)
        self.slack = SlackCache(redis)
        self.grants = GrantStore(redis, clock=clock, signer=signer)
        self.agents = AgentDirectory(redis, clock=clock)

    async def ping(self) -> None:
        """Raise unless the store answers."""
        await self._redis.ping()

    async def unsafe_settings(self) -> tuple[dict[str, str], str | None]:
        """The server settings that may lose approvals, or why they could not be read
        (bot/db/durability.py)."""
        return await durability.unsafe_settings(self._redis)

    async def fewest_replicas(self) -> int | None:
        """The fewest replicas any primary has (None: the server would not say)."""
        return await durability.fewest_replicas(self._redis)

    async def waiting_of(self, requester: str) -> int:
        """How many of `requester`'s calls wait for a person (bot/store/pending_count.py)."""
        return await pending_count.waiting_of(self._redis, requester)

    async def confirm_saved(self, n: Notice) -> None:
        """Raise NotReplicated unless the replicas asked for (HITL_REPLICA_ACKS) hold what
        `n` announces: a card never shows a step that a failover could still undo."""
        await acks_for(self._redis).confirm(n.stream)

    async def notifier_read_within(self, idle_ms: int) -> bool:
        """Whether a Slack notifier read this store's events in the last `idle_ms`."""
        return await notifier_read_within(self._redis, idle_ms)

    def waits(self) -> int:
        """How many waits (long polls, SDK waits) this process holds on the store now."""
        return hub_for(self._redis).waiting

    # -- what the background tasks read and hold ---------------------------------

    def bus(self, group: str) -> EventBus:
        """The events streams, read through consumer group `group`."""
        return EventBus(self._redis, group)

    def run_queue(self, *, group: str, consumer: str) -> RunQueue:
        return RunQueue(self._redis, group=group, consumer=consumer)

    async def park_notice(self, n: Notice, group: str, why: str) -> None:
        """Give up on delivering `n` for good: the item says why, `/metrics` counts it,
        and the entry is acknowledged (bot/store/posted/parked.py)."""
        await parked.park(self._redis, n, group, why)

    async def card_problems(self, rids: Sequence[str]) -> dict[str, str]:
        """Why each of these requests' cards could not be drawn, where one could not."""
        return await parked.reasons(self._redis, rids)

    def notice_lease(self, n: Notice, holder: str, seconds: int) -> Lease:
        """The lease on delivering one stream entry: one deliverer at a time."""
        return Lease(self._redis, keys.notice_lease(n.entry_id, n.stream), holder, seconds)

    def metrics_collector(
        self, *, consumer: str, block_ms: int = 1_000
    ) -> metrics.MetricsCollector:
        return metrics.MetricsCollector(self._redis, consumer=consumer, block_ms=block_ms)

    def group_reader(
        self,
        *,
        group: str,
        consumer: str,
        handle: Handle,
        dead_metric: str,
        retry: Retry | None = None,
        block_ms: int = 1_000,
        pace_ms: int = 0,
    ) -> GroupReader:
        """A delivery at least once of every events-stream entry (webhooks, spans)."""
        return GroupReader(
            self._redis,
            group=group,
            consumer=consumer,
            handle=handle,
            retry=retry or Retry(),
            dead_metric=dead_metric,
            block_ms=block_ms,
            pace_ms=pace_ms,
        )

    async def drop_groups_but(self, keep: Sequence[str], prefixes: tuple[str, ...]) -> list[str]:
        """Destroy the events-stream groups named with `prefixes` but not in `keep` (a
        webhook removed from HITL_WEBHOOKS, tracing turned off): left there, a group
        nobody reads holds every entry after its last one from the trim."""
        dropped: set[str] = set()
        for stream in (keys.events(s) for s in range(keys.SHARDS)):
            try:
                groups = await self._redis.xinfo_groups(stream)
            except ResponseError:  # no stream yet
                continue
            for g in groups:
                name = str(g["name"])
                if name.startswith(prefixes) and name not in keep:
                    await self._redis.xgroup_destroy(stream, name)
                    dropped.add(name)
        return sorted(dropped)

    async def span_record(self, rid: str) -> tuple[ActionRequest, str | None, list[AuditEntry]]:
        """What a request's span is built from, in two round trips: the request, the
        `traceparent` it was filed with (if any) and its audit entries."""
        pipe = self._redis.pipeline(transaction=False)  # final: nothing moves any more
        pipe.hget(keys.request(rid), "trace")
        pipe.lrange(keys.audit(rid), 0, -1)
        trace, lines = cast(tuple[str | None, list[str]], await pipe.execute())
        req = await self.requests.get(rid)
        return req, trace or None, [AuditEntry.parse(line) for line in lines]

    def events_trimmer(self, expected: tuple[str, ...]) -> EventTrimmer:
        return EventTrimmer(self._redis, expected=expected)

    async def metrics_text(self) -> str:
        """The Prometheus exposition of the store's counters and gauges."""
        return await metrics.render(self._redis)

    # -- a request's hash-chained audit ----------------------------------------------

    async def audit_lines(self, rid: str) -> list[str]:
        return await audit.lines(self._redis, rid)

    async def audit_entries(self, rid: str) -> list[AuditEntry]:
        return await audit.entries(self._redis, rid)

    async def verify_request(self, rid: str) -> Break | None:
        """Where the request's chain breaks, if it does."""
        return await audit.verify_request(self._redis, rid)

    async def check_heads(self, kept: list[tuple[str, str, int]]) -> list[heads.HeadFinding]:
        """How the chains differ from the signed heads exported earlier."""
        return await heads.check_heads(self._redis, kept)
