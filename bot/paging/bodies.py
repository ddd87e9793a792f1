"""What is sent to each paging service: pure functions from a request to a request body.

The shapes are the services' documented ones (PagerDuty Events API v2, Opsgenie Alert
API v2), within their limits, so the service takes them as they are. The text is for a
person woken by a phone: the call, its key arguments (hidden characters spelled out,
each cut visibly with "…"), the tier, who asked, the deadline and a link to the card.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from bot.core.invisible import visible
from bot.core.models import ActionRequest
from bot.core.pagers import Opsgenie, PagerDuty
from bot.core.text import ELLIPSIS, iso, truncate
from bot.paging import messages as pmsg

SOURCE = "hitl-bot"
PD_SUMMARY = 1024  # PagerDuty's limit on payload.summary
OG_MESSAGE = 130  # Opsgenie's limits on message and description
OG_DESCRIPTION = 15_000
# The arguments in `details`: Opsgenie caps the whole map, and the card linked shows them all.
OG_DETAIL = 1_000
ARG_VALUE = 60  # one argument's value in the summary
ARGS = 300  # all of them


@dataclass(frozen=True)
class Outgoing:
    """One HTTP call to a paging service. `headers` may hold the key: never log them."""

    service: str  # pagerduty | opsgenie | webhook
    action: str  # trigger | resolve
    url: str
    body: dict[str, Any]
    headers: dict[str, str]


def dedup_key(rid: str) -> str:
    """The key both services deduplicate on (PagerDuty `dedup_key`, Opsgenie `alias`):
    a retry, or a second `serve`, that sends the page again opens no second incident."""
    return f"hitl-{rid}"


def call_line(req: ActionRequest) -> str:
    """`tool(key=value, ...)`: each value as JSON, hidden characters spelled out."""
    parts = [
        f"{visible(k)}={truncate(visible(json.dumps(v, ensure_ascii=False)), ARG_VALUE)}"
        for k, v in req.args.items()
    ]
    return f"{visible(req.tool)}({truncate(', '.join(parts), ARGS)})"


def summary(req: ActionRequest) -> str:
    deadline = iso(req.expires_at) if req.expires_at else None
    who = visible(req.requester) + (f" for {visible(req.on_behalf_of)}" if req.on_behalf_of else "")
    return truncate(pmsg.summary(call_line(req), req.risk.value, who, deadline), PD_SUMMARY)


def details(req: ActionRequest, link: str | None) -> dict[str, str]:
    out = {
        "request_id": req.id,
        "tool": visible(req.tool),
        "arguments": truncate(visible(json.dumps(req.args, ensure_ascii=False)), OG_DETAIL),
        "risk": req.risk.value,
        "requested_by": visible(req.requester),
        "level": str(req.level + 1),
    }
    if req.on_behalf_of:
        out["on_behalf_of"] = visible(req.on_behalf_of)
    if req.expires_at:
        out["decide_by"] = iso(req.expires_at)
    if link:
        out["slack"] = link
    return out


def pagerduty_trigger(
    cfg: PagerDuty, url: str, key: str, req: ActionRequest, link: str | None, now_ms: int
) -> Outgoing:
    body: dict[str, Any] = {
        "routing_key": key,
        "event_action": "trigger",
        "dedup_key": dedup_key(req.id),
        "payload": {
            "summary": summary(req),
            "source": SOURCE,
            "severity": cfg.severity,
            "timestamp": iso(now_ms),
            "component": truncate(visible(req.tool), 100, ELLIPSIS),
            "group": req.risk.value,
            "class": "approval",
            "custom_details": details(req, link),
        },
        "client": SOURCE,
    }
    if link:
        body["client_url"] = link
        body["links"] = [{"href": link, "text": pmsg.LINK_TEXT}]
    return Outgoing("pagerduty", "trigger", url, body, {"Content-Type": "application/json"})


def pagerduty_resolve(url: str, key: str, rid: str) -> Outgoing:
    body = {"routing_key": key, "event_action": "resolve", "dedup_key": dedup_key(rid)}
    return Outgoing("pagerduty", "resolve", url, body, {"Content-Type": "application/json"})


def _og_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"GenieKey {key}", "Content-Type": "application/json"}


def opsgenie_create(
    cfg: Opsgenie, base: str, key: str, req: ActionRequest, link: str | None
) -> Outgoing:
    text = summary(req)
    description = text + (f"\n\n{pmsg.LINK_TEXT}: {link}" if link else "")
    body: dict[str, Any] = {
        "message": truncate(pmsg.short(visible(req.tool), req.risk.value), OG_MESSAGE),
        "alias": dedup_key(req.id),
        "description": truncate(description, OG_DESCRIPTION),
        "responders": [r.body() for r in cfg.responders],
        "tags": ["hitl", req.risk.value],
        "details": details(req, link),
        "source": SOURCE,
        "priority": cfg.priority,
    }
    return Outgoing("opsgenie", "trigger", f"{base}/v2/alerts", body, _og_headers(key))


def opsgenie_close(base: str, key: str, rid: str, note: str) -> Outgoing:
    alias = quote(dedup_key(rid), safe="")
    url = f"{base}/v2/alerts/{alias}/close?identifierType=alias"
    body = {"user": SOURCE, "source": SOURCE, "note": truncate(note, 25_000)}
    return Outgoing("opsgenie", "resolve", url, body, _og_headers(key))


def webhook(url: str, req: ActionRequest) -> Outgoing:
    """The generic webhook's body, unchanged since it was introduced (documented)."""
    body = {
        "request_id": req.id,
        "tool": req.tool,
        "risk": req.risk.value,
        "level": req.level + 1,
        "expires_at": req.expires_at,
    }
    return Outgoing("webhook", "trigger", url, body, {})
