"""A refusal as a modal's field error: plain text that names people.

A view submission's `errors` are plain strings: nothing documents mrkdwn there, so a
`<@U…>` mention or a `<!date^…>` token would show as raw markup. People are named as
Slack shows them (users.info), user groups by handle (usergroups.list), channels by
name, times in UTC; an id stands for whoever cannot be looked up. Slack cuts a field
error short, so names are dropped whole ("and 3 more") rather than cut in half.

The look-ups happen before the submission is answered (Slack waits 3 s for it), so
they share one short budget and a name found is kept for a while in this process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages as msg
from bot.core.invisible import visible
from bot.db.failures import STORE_DOWN
from bot.errors import AlreadyResolved, HitlError, NotEligible, StalePayload
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.store.posted.slack_cache import SlackCache

log = logging.getLogger(__name__)

MODAL_ERROR_MAX = 150  # what Slack shows of a field error
LOOKUP_BUDGET_S = 1.0  # of the 3 s Slack gives a submission's answer
CACHE_S = 600.0  # a display name changes rarely, and a stale one misleads nobody
STORED_S = 30 * 86_400  # as long as the records that name them (bot/store/run/runs.py)


class ForeignRefused(NotEligible):
    """A member of another workspace may not decide: the store logged and audited it."""


class Names:
    """Display names of Slack principals, looked up on demand and kept for `CACHE_S`;
    with a `store`, what is looked up is kept there too (`STORED_S`), for the operator's
    CLI and report, which show names where they can and have no Slack token."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, store: SlackCache | None = None
    ) -> None:
        self._clock = clock
        self._known: dict[str, tuple[float, str]] = {}
        self._store = store

    async def of(self, client: AsyncWebClient, ids: Iterable[str]) -> dict[str, str]:
        """`id -> name` for every id; an id nobody could look up names itself."""
        wanted = list(dict.fromkeys(ids))
        out = {i: self._cached(i) or _literal(i) for i in wanted}
        missing = [i for i in wanted if self._cached(i) is None and _looked_up(i)]
        if missing:
            try:
                await asyncio.wait_for(self._look_up(client, missing), LOOKUP_BUDGET_S)
            except TimeoutError:
                log.info("names not found in time", extra={"names": len(missing)})
            found = {i: name for i in missing if (name := self._cached(i)) is not None}
            out |= found
            await self._remember(found)
        return out

    async def _remember(self, found: dict[str, str]) -> None:
        if self._store is None or not found:
            return
        try:
            await self._store.keep_names(found, STORED_S)
        except STORE_DOWN:  # a name is a nicety: the decision it came with stands
            log.info("names not kept", extra={"names": len(found)})

    def _cached(self, name: str) -> str | None:
        hit = self._known.get(name)
        return hit[1] if hit is not None and hit[0] > self._clock() else None

    def _keep(self, name: str, shown: str) -> None:
        if shown:
            self._known[name] = (self._clock() + CACHE_S, visible(shown))

    async def _look_up(self, client: AsyncWebClient, ids: list[str]) -> None:
        users = [i for i in ids if i.startswith(("U", "W"))]
        channels = [i for i in ids if i.startswith(("C", "G"))]
        jobs = [self._user(client, u) for u in users] + [self._channel(client, c) for c in channels]
        if any(i.startswith("S") for i in ids):
            jobs.append(self._groups(client))
        await asyncio.gather(*jobs)

    async def _user(self, client: AsyncWebClient, uid: str) -> None:
        try:
            user = (await client.users_info(user=uid)).get("user") or {}
        except SlackApiError as exc:
            log.info("no name for a user", extra={"user": uid, "error": _error(exc)})
            return
        profile = user.get("profile") or {}
        for shown in (profile.get("real_name"), user.get("real_name"), profile.get("display_name")):
            if isinstance(shown, str) and shown.strip():
                self._keep(uid, shown.strip())
                return
        self._keep(uid, str(user.get("name") or ""))

    async def _channel(self, client: AsyncWebClient, cid: str) -> None:
        try:
            found = (await client.conversations_info(channel=cid)).get("channel") or {}
        except SlackApiError as exc:
            log.info("no name for a channel", extra={"channel": cid, "error": _error(exc)})
            return
        if isinstance(name := found.get("name"), str) and name:
            self._keep(cid, "#" + name)

    async def _groups(self, client: AsyncWebClient) -> None:
        try:
            groups = (await client.usergroups_list()).get("usergroups") or []
        except SlackApiError as exc:
            log.info("no names for user groups", extra={"error": _error(exc)})
            return
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("handle"), str) and g.get("id"):
                self._keep(str(g["id"]), "@" + g["handle"])


def _looked_up(name: str) -> bool:
    return name[:1] in ("U", "W", "S", "C", "G") and name[1:].isalnum()


def _literal(name: str) -> str:
    return smsg.ANYONE_ELIGIBLE if name == "*" else visible(name)


def _error(exc: SlackApiError) -> object:
    return exc.response.get("error")


def fit(text: str) -> str:
    """The last resort for a text with no names to drop: cut it where Slack would."""
    return esc.truncate(text, MODAL_ERROR_MAX)


async def modal_refusal(names: Names, client: AsyncWebClient, exc: HitlError) -> str:
    """Why a decision made in a modal changed nothing, as a field error."""
    if isinstance(exc, AlreadyResolved):
        by = (await names.of(client, [exc.by]))[exc.by]
        how = exc.how.replace("_", " ")
        return fit(msg.ALREADY_RESOLVED.format(how=how, by=by, at=msg.when(exc.at)))
    if isinstance(exc, ForeignRefused):
        return fit(msg.MODAL_FOREIGN)
    if isinstance(exc, NotEligible) and exc.actor:
        found = await names.of(client, exc.allowed)
        template = msg.MODAL_OWN if exc.own else msg.MODAL_NOT_APPROVER
        room = MODAL_ERROR_MAX - len(template.format(approvers=""))
        shown = esc.join_fit([found[a] for a in exc.allowed], room) or smsg.NOBODY
        return fit(template.format(approvers=shown))
    if isinstance(exc, StalePayload):
        return fit(msg.MODAL_STALE)
    return fit(visible(str(exc)))
