"""Pages the on-call engineer when a request reaches a level with a pager, and resolves
the page when the request leaves review.

Pages go out from the notifier, so they ride the same outbox as Slack messages: a page
the service did not take (a timeout, a 5xx, a 429) raises, the notice stays pending
and is delivered again later. A page the service took is marked (bot/store/posted/pages.py),
so that retry, or a second `serve`, does not send it again; and each service also
deduplicates on the request's key (`hitl-<id>`). Keys come from the environment only,
named by the level; no key is ever logged or shown.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Level
from bot.core.pagers import (
    OPSGENIE_URL,
    OPSGENIE_URL_SETTING,
    PAGERDUTY_URL,
    PAGERDUTY_URL_SETTING,
)
from bot.core.states import State
from bot.paging import bodies as bodies
from bot.paging import messages as pmsg
from bot.paging.bodies import Outgoing
from bot.store.posted.pages import REFUSED, RESOLVED, TRIGGERED
from bot.store.stores import StoreSet

log = logging.getLogger(__name__)


class Refused(Exception):
    """The page cannot be sent as it is (no key, or the service said no for good)."""


class Pager:
    def __init__(
        self,
        rt: StoreSet,
        client: AsyncWebClient,
        http: httpx.AsyncClient,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.rt = rt
        self.client = client
        self.http = http
        self.env = os.environ if env is None else env

    async def trigger(self, req: ActionRequest) -> None:
        """Page every pager of the level `req` is at, each once."""
        level = req.assignees
        marks = await self.rt.pages.all(req.id)
        todo = [s for s in _services(level) if (req.level, s) not in marks]
        if not todo:
            return
        link = await self._link(req)
        for service in todo:
            try:
                out = self._trigger(service, level, req, link)
            except Refused as why:
                log.error("%s", why)
                await self._done(req.id, req.level, out_service=service, action="trigger")
                continue
            if await self._send(req.id, out):
                await self.rt.pages.mark(req.id, req.level, service, TRIGGERED)
            else:
                await self.rt.pages.mark(req.id, req.level, service, REFUSED)

    async def resolve(self, req: ActionRequest) -> None:
        """Resolve (PagerDuty) or close (Opsgenie) each page `req` sent, once it left review."""
        if req.state == State.PENDING_REVIEW:
            return
        marks = await self.rt.pages.all(req.id)
        for (lvl, service), mark in sorted(marks.items()):
            if mark != TRIGGERED or lvl >= len(req.levels):
                continue
            try:
                out = self._resolve(service, req.levels[lvl], req)
            except Refused as why:
                log.error("%s", why)
                await self._done(req.id, lvl, out_service=service, action="resolve")
                continue
            if out is not None:
                await self._send(req.id, out)  # refused for good: nothing left to close
            await self.rt.pages.mark(req.id, lvl, service, RESOLVED)

    def _trigger(
        self, service: str, level: Level, req: ActionRequest, link: str | None
    ) -> Outgoing:
        now = self.rt.clock()
        if service == "pagerduty" and level.pagerduty:
            cfg = level.pagerduty
            url = cfg.url or self.env.get(PAGERDUTY_URL_SETTING) or PAGERDUTY_URL
            key = self._key("PagerDuty", cfg.routing_key_env, req.id, "trigger")
            return bodies.pagerduty_trigger(cfg, url, key, req, link, now)
        if service == "opsgenie" and level.opsgenie:
            og = level.opsgenie
            key = self._key("Opsgenie", og.api_key_env, req.id, "trigger")
            return bodies.opsgenie_create(og, self._og_base(og.url), key, req, link)
        return bodies.webhook(str(level.pager_url), req)

    def _resolve(self, service: str, level: Level, req: ActionRequest) -> Outgoing | None:
        if service == "pagerduty" and level.pagerduty:
            cfg = level.pagerduty
            url = cfg.url or self.env.get(PAGERDUTY_URL_SETTING) or PAGERDUTY_URL
            key = self._key("PagerDuty", cfg.routing_key_env, req.id, "resolve")
            return bodies.pagerduty_resolve(url, key, req.id)
        if service == "opsgenie" and level.opsgenie:
            og = level.opsgenie
            key = self._key("Opsgenie", og.api_key_env, req.id, "resolve")
            res = req.resolution
            note = pmsg.outcome_note(
                req.state.value, res.actor if res else None, res.text if res else None
            )
            return bodies.opsgenie_close(self._og_base(og.url), key, req.id, note)
        return None  # the generic webhook has no resolve

    def _key(self, service: str, var: str, rid: str, action: str) -> str:
        key = self.env.get(var, "")
        if not key:
            raise Refused(pmsg.key_missing(service, var, rid, action))
        return key

    def _og_base(self, url: str | None) -> str:
        return (url or self.env.get(OPSGENIE_URL_SETTING) or OPSGENIE_URL).rstrip("/")

    async def _done(self, rid: str, level: int, *, out_service: str, action: str) -> None:
        await self.rt.pages.count(rid, out_service, action, "failed")
        await self.rt.pages.mark(rid, level, out_service, REFUSED)

    async def _send(self, rid: str, out: Outgoing) -> bool:
        """True once the service took it; False if it refused it for good. Anything that
        may pass later raises httpx.HTTPError, so the outbox retries the notice. Only the
        service, action and status are logged: the URL, headers and body may hold a key."""
        try:
            resp = await self.http.post(out.url, json=out.body, headers=out.headers)
        except httpx.HTTPError as exc:
            await self.rt.pages.count(rid, out.service, out.action, "failed")
            why = type(exc).__name__
            log.warning("%s", pmsg.failed(out.service, out.action, rid, why))
            raise httpx.HTTPError(pmsg.failed(out.service, out.action, rid, why)) from None
        status = resp.status_code
        if status < 300:
            await self.rt.pages.count(rid, out.service, out.action, "sent")
            return True
        await self.rt.pages.count(rid, out.service, out.action, "failed")
        if status == 429 or status >= 500:
            why = f"HTTP {status}"
            log.warning("%s", pmsg.failed(out.service, out.action, rid, why))
            raise httpx.HTTPError(pmsg.failed(out.service, out.action, rid, why))
        log.error("%s", pmsg.refused(out.service, out.action, rid, status))
        return False

    async def _link(self, req: ActionRequest) -> str | None:
        """The card's permalink, so the page leads straight to the buttons. A page
        without it still goes out: waking the right person matters more."""
        card = await self.rt.cards.request_card(req.id)
        if not card.channel or not card.ts:
            return None
        try:
            got = await self.client.chat_getPermalink(channel=card.channel, message_ts=card.ts)
        except SlackApiError as exc:
            log.info("no permalink for the card of %s: %s", req.id, exc.response.get("error"))
            return None
        return str(got.get("permalink") or "") or None


def _services(level: Level) -> list[str]:
    out = ["pagerduty"] if level.pagerduty else []
    out += ["opsgenie"] if level.opsgenie else []
    return out + (["webhook"] if level.pager_url else [])
