"""Signed CloudEvents to each configured webhook, at least once (docs/webhooks.md).

Each webhook reads the events streams through a consumer group of its own
(bot/store/stream/group_reader.py): an event is acknowledged only once its receiver answered
2xx, so several `serve` processes share the work and a `serve` that dies mid-delivery
leaves the event to another. A failed delivery is tried again with a doubling delay
(HITL_WEBHOOK_RETRY_MS) and, after HITL_WEBHOOK_MAX_ATTEMPTS tries, dead-lettered:
counted in /metrics as `hitl_webhook_dead_letters_total{webhook=NAME}` and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx

from bot.clock import wall_ms
from bot.errors import NotFound
from bot.gate.runtime import Runtime
from bot.store.stream.events import Notice
from bot.telemetry import cloudevents as ce
from bot.telemetry import messages as msg
from bot.telemetry.webhook_config import Webhook

log = logging.getLogger(__name__)

DEAD_METRIC = 'hitl_webhook_dead_letters_total{{webhook="{name}"}}'


async def event_data(rt: Runtime, n: Notice) -> dict[str, Any]:
    """What the event says: the item as read at delivery, and what the entry reports."""
    base: dict[str, Any] = {"kind": n.kind, "id": n.id, "event": n.event, "state": n.state}
    try:
        if n.kind == "request":
            req = await rt.requests.get(n.id)
            shown = req.model_dump(mode="json", exclude={"levels", "audit_head", "candidates"})
            return base | {"version": n.version, "request": shown}
        if n.kind == "question":
            return base | {"question": (await rt.questions.get(n.id)).model_dump(mode="json")}
        if n.kind == "run":
            return base | {"run": (await rt.runs.get(n.id)).model_dump(mode="json")}
    except NotFound:
        pass  # gone since (expired): the event still says what happened
    return base


class Deliverer:
    """One webhook's handler of events-stream entries: True once its receiver took it."""

    def __init__(
        self,
        rt: Runtime,
        hook: Webhook,
        client: httpx.AsyncClient,
        *,
        now_ms: Callable[[], int] = wall_ms,
    ) -> None:
        self.rt, self.hook, self.client, self.now_ms = rt, hook, client, now_ms

    @property
    def dead_metric(self) -> str:
        return DEAD_METRIC.format(name=self.hook.name)

    async def __call__(self, n: Notice) -> bool:
        kind = ce.event_type(n)
        if kind is None:
            return True
        body = ce.body_of(ce.envelope(n, kind, await event_data(self.rt, n)))
        ts = self.now_ms() // 1000  # each try signs afresh: a retry is never stale
        headers = {
            "Content-Type": ce.CONTENT_TYPE,
            ce.TIMESTAMP_HEADER: str(ts),
            ce.SIGNATURE_HEADER: ce.sign(self.hook.secret, ts, body),
            "User-Agent": "hitl-bot-webhooks",
        }
        name = self.hook.name
        try:
            resp = await self.client.post(self.hook.url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            log.warning(msg.WEBHOOK_UNREACHABLE.format(name=name, type=kind, id=n.id, error=exc))
            return False
        if 200 <= resp.status_code < 300:
            return True
        status = resp.status_code
        log.warning(msg.WEBHOOK_REFUSED.format(name=name, type=kind, id=n.id, status=status))
        return False
