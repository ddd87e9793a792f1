"""What the notifier does when Slack refuses a message (an `ok: false` answer, not a
429 or a 5xx, which are retried as any outage is).

Most refusals are fixed by a person: the bot invited to the channel (`not_in_channel`),
the channel created (`channel_not_found`) or unarchived (`is_archived`), a scope added
(`missing_scope`), a new token after a rotation (`invalid_auth`, `token_revoked`,
`account_inactive`). Dropping the notice then lost the card for good (issue 42): it now
stays in the outbox and is retried with a capped backoff, the item says why
(bot/store/posted/refused.py), an ERROR line names the channel and the fix, `/metrics` counts
the refusal by its code, and the requester's run thread is told once.

Only refusals no retry can ever fix are given up (`GIVEN_UP`, each one listed in
docs/troubleshooting.md): retrying them forever would hold up the item's later events.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import NotFound
from bot.slack.blocks import escape as esc
from bot.slack.transport import refusal_messages as rmsg
from bot.store.run.runs import RunStore
from bot.store.stores import StoreSet
from bot.store.stream.events import Notice
from bot.supervise import Backoff

log = logging.getLogger(__name__)

# Refusals no retry can fix: the message itself is wrong, or what it edits is gone.
# Keep docs/troubleshooting.md's list the same.
GIVEN_UP = frozenset(
    {
        "message_not_found",  # the message to update was deleted (or the workspace reset)
        "cant_update_message",  # not the bot's message
        "edit_window_closed",
        "thread_not_found",  # the thread's first message was deleted
        "msg_too_long",
        "no_text",
        "invalid_blocks",
        "invalid_blocks_format",
        "too_many_attachments",
        "invalid_attachments",
        "invalid_metadata_format",
        "invalid_metadata_schema",
        "metadata_too_large",
        "invalid_arguments",
        "invalid_arg_name",
        "invalid_array_arg",
        "invalid_charset",
        "invalid_form_data",
        "invalid_post_type",
        "missing_post_type",
        "invalid_json",
        "json_not_object",
        "unknown_method",
        "method_deprecated",
        "deprecated_endpoint",
        "not_allowed_token_type",
        "user_not_found",  # a DM to a user id the workspace does not have
        "users_not_found",
        "cannot_dm_bot",
        "invalid_name",  # a reaction's emoji
        "no_reaction",
        "too_many_reactions",
    }
)
# Refusals that name no channel of ours: the bot's name is asked for only where the fix
# is an invite.
_INVITE = frozenset({"not_in_channel", "channel_not_found"})
REFUSAL_BACKOFF = Backoff(first_s=15.0, cap_s=300.0)  # 15 s doubling to 5 minutes
_REMEMBERED = 10_000  # refused entries whose count this process keeps, at most

# What a look-up beside the refusal (the bot's name, a channel's) may raise: it only
# makes the words better, so it never stops the refusal from being handled.
_LOOKUP = (SlackApiError, aiohttp.ClientError, OSError, TimeoutError)
Say = Callable[[str, str, str], Awaitable[None]]  # (channel, thread ts, text)


def error_of(exc: SlackApiError) -> str:
    return str(exc.response.get("error") or "unknown_error")


def _args(exc: SlackApiError) -> dict[str, Any]:
    """The refused call's arguments, wherever slack_sdk sent them (JSON, form, query)."""
    req = getattr(exc.response, "req_args", None) or {}
    out: dict[str, Any] = {}
    for part in ("params", "data", "json"):
        got = req.get(part)
        if isinstance(got, dict):
            out |= got
    return out


def _method(exc: SlackApiError) -> str:
    url = str(getattr(exc.response, "api_url", "") or "")
    return url.rstrip("/").rsplit("/", 1)[-1] or "a Slack call"


class Refusals:
    def __init__(
        self,
        rt: StoreSet,
        runs: RunStore,
        client: AsyncWebClient,
        say: Say,
        *,
        backoff: Backoff = REFUSAL_BACKOFF,
    ) -> None:
        self.rt = rt
        self.runs = runs
        self.client = client
        self.say = say
        self.backoff = backoff
        self._count: dict[str, int] = {}  # entry id -> refusals so far, in this process
        self._hold: dict[str, int] = {}  # entry id -> ms to leave it alone, once
        self._bot: str | None = None
        self._names: dict[str, str] = {}  # channel id -> "#name"

    def hold_ms(self, n: Notice) -> int | None:
        """How long to leave `n` alone after the refusal just met (once), if one was."""
        return self._hold.pop(n.entry_id, None)

    async def refused(self, n: Notice, exc: SlackApiError) -> bool:
        """True when `n` is given up (the caller acknowledges it); False to keep it in the
        outbox, left alone for `hold_ms(n)`."""
        error = error_of(exc)
        what = f"{n.kind} {n.id} ({n.event})"
        await self.rt.refused.count(n, error)
        channel = await self._channel_named(exc)
        if error in GIVEN_UP:
            log.error(rmsg.log_given_up(_method(exc), channel, what, error))
            self._count.pop(n.entry_id, None)
            return True
        attempt = self._count.pop(n.entry_id, 0) + 1
        self._count[n.entry_id] = attempt  # re-inserted: the oldest are forgotten first
        while len(self._count) > _REMEMBERED:
            self._count.pop(next(iter(self._count)))
        wait_s = self.backoff.delay(attempt)
        self._hold[n.entry_id] = int(wait_s * 1000)
        bot = await self._bot_name() if error in _INVITE else ""
        needed = str(exc.response.get("needed") or "")
        to_fix = rmsg.fix(error, bot=bot, channel=channel, needed=needed)
        log.error(rmsg.log_retrying(_method(exc), channel, what, error, to_fix, attempt, wait_s))
        await self.rt.refused.say(n, rmsg.card_error(channel, error, to_fix))
        if n.kind == "request":
            await self._tell_run(n.id, channel, error, to_fix)
        return False

    async def delivered(self, n: Notice) -> None:
        """`n` went through: if Slack had refused it, its item has nothing more to say."""
        refusals = self._count.pop(n.entry_id, None)
        if refusals is None:
            return
        await self.rt.refused.clear(n)
        log.info(rmsg.log_delivered(f"{n.kind} {n.id} ({n.event})", refusals))

    async def _tell_run(self, rid: str, channel: str, error: str, to_fix: str) -> None:
        """Tell the run's thread, once, that the request's card is not in Slack."""
        try:
            req = await self.rt.requests.get(rid)
            run = await self.runs.get(req.run_id) if req.run_id else None
        except NotFound:
            return
        if run is None or not run.channel or not run.thread_ts:
            return
        if (await self.rt.cards.request_card(rid)).ts:
            return  # the card is there: it is a later message of it that Slack refused
        if not await self.rt.refused.first_telling(rid):
            return
        text = rmsg.run_told(esc.code(req.tool), rid, channel, error, to_fix)
        try:
            await self.say(run.channel, run.thread_ts, text)
        except _LOOKUP as exc:  # e.g. the run's thread is in the refused channel too
            log.info("run %s not told of the refused card: %r", run.id, exc)

    async def _bot_name(self) -> str:
        if self._bot is None:
            try:
                got = await self.client.auth_test()
                self._bot = str(got.get("user") or "") or None
            except _LOOKUP as exc:
                log.info("no bot name from auth.test: %r", exc)
        return self._bot or "hitl-bot"

    async def _channel_named(self, exc: SlackApiError) -> str:
        """The refused call's channel as a person names it ("#name" where Slack says)."""
        args = _args(exc)
        ref = str(args.get("channel") or args.get("users") or "")
        if not ref:
            return "Slack"
        if ref.startswith("#") or ref[0] not in "CG":
            return ref
        if ref not in self._names:
            try:
                got = await self.client.conversations_info(channel=ref)
                name = (got.get("channel") or {}).get("name")
                self._names[ref] = f"#{name}" if name else ref
            except _LOOKUP:
                return ref
        return self._names[ref]
