"""One Slack message per item and slot, even when a process dies in the middle of posting.

`chat.postMessage` has no idempotency key. If a process dies after Slack stored a message
but before the message's ts was saved, the retried notice would post a second one, and the
first would keep live buttons that nothing ever updates. So each such post

1. records an intent first (when the first attempt started), beside where its ts is saved;
2. carries message metadata naming the item and the slot;

and an attempt that finds an intent but no saved ts looks for that message in the
conversation (from shortly before the intent on) and adopts it instead of posting again.

The look-up runs only on that recovery path: Slack rate-limits `conversations.history`
and `conversations.replies` hard for apps outside the Marketplace (one call a minute), so
it must never be part of the ordinary post.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, cast

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.clock import Clock, wall_ms
from bot.slack.access.groups import channel_id
from bot.store.posted.cards import Intent
from bot.store.stores import StoreSet

log = logging.getLogger(__name__)

EVENT_TYPE = "hitl_post"
SKEW_MS = 60_000  # Slack's clock against ours: look a little before the intent
PAGE = 100
MAX_PAGES = 20  # past this many messages since the intent, give up looking and post


@dataclass(frozen=True)
class Tag:
    """What a message is: the item (`request`, `question`) and its slot (`card`, an
    escalation slot such as `0:user:U123`, `question`)."""

    kind: str
    id: str
    slot: str

    def metadata(self) -> dict[str, Any]:
        payload = {"kind": self.kind, "id": self.id, "slot": self.slot}
        return {"event_type": EVENT_TYPE, "event_payload": payload}

    @staticmethod
    def of(message: dict[str, Any]) -> Tag | None:
        """The tag a message carries, if it is one of ours."""
        meta = message.get("metadata")
        if not isinstance(meta, dict) or meta.get("event_type") != EVENT_TYPE:
            return None
        p = meta.get("event_payload")
        if not isinstance(p, dict):
            return None
        return Tag(str(p.get("kind", "")), str(p.get("id", "")), str(p.get("slot", "")))


@dataclass(frozen=True)
class Posted:
    channel: str
    ts: str
    adopted: bool  # posted by an earlier attempt: it may show an older state


class OncePoster:
    def __init__(self, store: StoreSet, client: AsyncWebClient, clock: Clock = wall_ms) -> None:
        # The wall clock, not the injectable one: the intent is compared with Slack's
        # timestamps, which are real time (a test's fake clock may be hours ahead).
        self.cards = store.cards
        self.cache = store.slack
        self.client = client
        self.clock = clock
        self._bot_id: str | None = None

    async def post(
        self,
        tag: Tag,
        intent: Intent,
        *,
        channel: str,
        thread_ts: str | None = None,
        **message: Any,
    ) -> Posted:
        """Post `message` tagged with `tag`, or adopt the copy an earlier attempt posted.

        `intent` holds when the first attempt started (bot/store/posted/cards.py); the caller
        clears it once it saved the ts."""
        started = await self.cards.intent_started(intent)
        if started is not None:
            found = await self.find(tag, channel, thread_ts, intent_ms=started)
            if found is not None:
                log.info("adopted the %s message of %s %s posted before a restart", *_t(tag))
                return Posted(found[0], found[1], adopted=True)
        else:
            await self.cards.mark_intent(intent, self.clock())
        resp = await self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, metadata=tag.metadata(), **message
        )
        return Posted(str(resp["channel"]), str(resp["ts"]), adopted=False)

    async def find(
        self, tag: Tag, channel: str, thread_ts: str | None, *, intent_ms: int
    ) -> tuple[str, str] | None:
        """(channel id, ts) of our message tagged `tag` in `channel` (or the thread
        `thread_ts` there), posted since shortly before `intent_ms`."""
        oldest = f"{max(intent_ms - SKEW_MS, 0) / 1000:.6f}"
        try:
            cid = await self._conversation(channel)
            if cid is None:
                return None
            return await self._scan(tag, cid, thread_ts, oldest)
        except SlackApiError as exc:
            status = exc.response.status_code
            if status == 429 or status >= 500:
                raise  # the outbox retries the notice; posting now could make the duplicate
            # No history scope, an unknown channel: one card too many beats no card at all.
            log.warning(
                "cannot look for an earlier %s message of %s %s: %s",
                *_t(tag),
                exc.response.get("error"),
            )
            return None

    async def _scan(
        self, tag: Tag, cid: str, thread_ts: str | None, oldest: str
    ) -> tuple[str, str] | None:
        bot_id = await self._own_bot_id()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            args: dict[str, Any] = {
                "channel": cid,
                "oldest": oldest,
                "include_all_metadata": True,
                "limit": PAGE,
                "cursor": cursor,
            }
            if thread_ts:
                resp = await self.client.conversations_replies(ts=thread_ts, **args)
            else:
                resp = await self.client.conversations_history(**args)
            for m in cast(list[dict[str, Any]], resp.get("messages") or []):
                # only our own messages: another app could copy the metadata
                if m.get("bot_id") == bot_id and Tag.of(m) == tag:
                    return cid, str(m["ts"])
            cursor = (resp.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return None
        log.warning("gave up looking for an earlier %s message of %s %s", *_t(tag))
        return None

    async def _own_bot_id(self) -> str:
        if self._bot_id is None:
            self._bot_id = str((await self.client.auth_test()).get("bot_id") or "")
        return self._bot_id

    async def _conversation(self, ref: str) -> str | None:
        """The conversation id the history methods need: `#name` and user ids resolved."""
        if ref.startswith("#"):
            return await channel_id(self.cache, self.client, ref)
        if ref[:1] in ("U", "W"):  # a user: chat.postMessage posts to the DM with them
            resp = await self.client.conversations_open(users=ref)
            return str(resp["channel"]["id"])
        return ref


def _t(tag: Tag) -> tuple[str, str, str]:
    return tag.slot, tag.kind, tag.id
