"""What `serve` runs for telemetry: the span emitter and one deliverer per webhook,
each a consumer group over the events streams (bot/store/stream/group_reader.py)."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from bot.gate.runtime import Runtime
from bot.store.stream.group_reader import GroupReader, Retry
from bot.telemetry import messages as msg
from bot.telemetry.setup import provider_from_env
from bot.telemetry.webhook_config import webhooks
from bot.telemetry.webhooks import Deliverer

log = logging.getLogger(__name__)
TRACE_GROUP = "traces"  # bot/telemetry/spans.py's GROUP, without importing the SDK


@dataclass
class Outbound:
    """The readers to run, by task name, and the consumer groups they read with (the
    events trimmer keeps each entry until all of them acknowledged it)."""

    readers: dict[str, GroupReader] = field(default_factory=dict)
    tracer: Any = None
    client: httpx.AsyncClient | None = None

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(r.group for r in self.readers.values())

    async def forget_others(self, rt: Runtime) -> None:
        """Drop the groups of webhooks no longer configured (and of tracing, when off),
        so the events trimmer is not held back by a group nobody reads any more."""
        for name in await rt.drop_groups_but(self.groups, (TRACE_GROUP, "webhook:")):
            log.warning(msg.GROUP_DROPPED.format(group=name))

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        if self.tracer is not None:
            self.tracer.shutdown()  # flushes the spans the batch still holds


def outbound(
    rt: Runtime,
    *,
    consumer: str,
    tracer: Any = None,
    retry: Retry | None = None,
    block_ms: int = 1_000,
    env: Callable[[], Any] = lambda: os.environ,
) -> Outbound:
    """`tracer`: a TracerProvider (tests pass one); None: from the OTEL_* variables."""
    out = Outbound(tracer=tracer if tracer is not None else provider_from_env(env()))
    if out.tracer is not None:
        spans = importlib.import_module("bot.telemetry.spans")
        out.readers["traces"] = rt.group_reader(
            group=TRACE_GROUP,
            consumer=consumer,
            handle=spans.SpanEmitter(rt, out.tracer),
            dead_metric=spans.DEAD_METRIC,
            block_ms=block_ms,
            pace_ms=spans.PACE_MS,
        )
        log.info(msg.TRACING_ON)
    hooks = webhooks(rt.settings, env())
    if hooks:
        s = rt.settings
        retry = retry or Retry(s.hitl_webhook_retry_ms, max_attempts=s.hitl_webhook_max_attempts)
        # half the time before another serve may take the event over: never two at once
        out.client = httpx.AsyncClient(timeout=retry.in_flight_ms / 2000)
        for hook in hooks:
            d = Deliverer(rt, hook, out.client)
            out.readers[f"webhook:{hook.name}"] = rt.group_reader(
                group=hook.group,
                consumer=consumer,
                handle=d,
                dead_metric=d.dead_metric,
                retry=retry,
                block_ms=block_ms,
            )
    return out
