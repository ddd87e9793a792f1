"""Where the bot's Slack messages are: every card, escalation post and run line it keeps.

The refs live beside what they show (extra fields of the request, question and run
hashes, which the models ignore; a request's escalation posts in `keys.posts`), so any
notifier process updates what another one posted, and a retried notice finds the
message instead of posting it twice.

An intent (`Intent`: a hash and a field) records when the first attempt to post a
message started, until its ts is saved; an attempt that finds one looks for the
message in Slack before posting again (bot/slack/delivery/once.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from bot.store import keys
from bot.store.posted.parked import FIELD as CARD_ERROR
from bot.store.posted.refused import TOLD as CARD_TOLD

Intent = tuple[str, str]  # (hash key, field): when the first attempt to post started

POSTING = "msg_posting"  # the intent of an item's own card
CARD_TS = "card_ts"  # the run card the bot posted for /hitl run (a mention's run has none)
FREE_TS = "free_ts"  # the thread line that lists the latest burst of calls without review
FREE_CALLS = "free_calls"  # that line's calls, as JSON [[request id, line], ...]
# When another line followed it (an event time, ms): later calls start a new line, and a
# call made before then still joins it, however late its event is delivered.
FREE_ENDED = "free_ended"
OPEN_VIEW_TTL_S = 86_400  # a modal left open longer than a day is forgotten, not updated
LINK = "link"  # the permalink of the run's thread, for `hitl-bot show RUN_ID`
CARD_AT = "card_at"  # when a request's card was first posted (ms): bot/core/fatigue.py


@dataclass(frozen=True)
class CardRef:
    channel: str | None
    ts: str | None
    extra: str | None  # a request's intent (ms), a question's answer source


def _posting(slot: str) -> str:
    return f"{slot}:posting"


class Cards:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    # -- intents ------------------------------------------------------------------

    def request_intent(self, rid: str) -> Intent:
        return keys.request(rid), POSTING

    def question_intent(self, qid: str) -> Intent:
        return keys.question(qid), POSTING

    def post_intent(self, rid: str, slot: str) -> Intent:
        return keys.posts(rid), _posting(slot)

    async def intent_started(self, intent: Intent) -> int | None:
        got = await self.redis.hget(*intent)
        return None if got is None else int(got)

    async def mark_intent(self, intent: Intent, now_ms: int) -> None:
        """Record when the first attempt started (a later attempt keeps the first time)."""
        await self.redis.hsetnx(intent[0], intent[1], now_ms)

    async def drop_intent(self, intent: Intent) -> None:
        await self.redis.hdel(*intent)

    # -- a request's and a question's own card ----------------------------------------

    async def _ref(self, key: str, extra: str) -> CardRef:
        got = cast(list[str | None], await self.redis.hmget(key, ["msg_channel", "msg_ts", extra]))
        return CardRef(got[0], got[1], got[2])

    async def add_open_view(self, rid: str, view_id: str, callback_id: str) -> None:
        """A modal opened on the request, to close as it leaves review (Slack keeps a
        modal open until the person closes it, however stale)."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.open_views(rid), view_id, callback_id)
        pipe.expire(keys.open_views(rid), OPEN_VIEW_TTL_S)
        await pipe.execute()

    async def take_open_views(self, rid: str) -> dict[str, str]:
        """The request's open modals (view id -> callback id), forgotten as they are read."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hgetall(keys.open_views(rid))
        pipe.delete(keys.open_views(rid))
        got, _ = await pipe.execute()
        return {str(k): str(v) for k, v in (got or {}).items()}

    async def request_card(self, rid: str) -> CardRef:
        """The request's card; `extra` the intent of an attempt that never saved its ts."""
        return await self._ref(keys.request(rid), POSTING)

    async def save_request_card(
        self, rid: str, channel: str, ts: str, view: str | None = None, *, at: int | None = None
    ) -> None:
        """The card's place (and the blocks it shows), its intent cleared, in one step;
        `at`, when the card was posted, is kept from the first save only."""
        key = keys.request(rid)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(key, mapping={"msg_channel": channel, "msg_ts": ts})
        if at is not None:
            pipe.hsetnx(key, CARD_AT, str(at))
        if view is not None:
            pipe.hset(key, "msg_view", view)
        pipe.hdel(key, POSTING, CARD_ERROR, CARD_TOLD)  # drawn after all: nothing to say
        await pipe.execute()

    async def set_request_view(self, rid: str, view: str) -> None:
        """The hash of the blocks the request's card shows now."""
        await self.redis.hset(keys.request(rid), "msg_view", view)

    async def question_card(self, qid: str) -> CardRef:
        """The question's card; `extra` where the answer came from (`CHANNEL:TS`)."""
        return await self._ref(keys.question(qid), "answer_source")

    async def save_question_card(self, qid: str, channel: str, ts: str) -> None:
        key = keys.question(qid)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(key, mapping={"msg_channel": channel, "msg_ts": ts})
        pipe.hdel(key, POSTING)
        await pipe.execute()

    async def set_answer_source(self, qid: str, channel: str, ts: str) -> None:
        """The reply that answered the question, so Slack can tick it off once read."""
        await self.redis.hset(keys.question(qid), "answer_source", f"{channel}:{ts}")

    # -- a request's escalation posts (field `SLOT` -> `CHANNEL TS`) -------------------

    async def posts(self, rid: str) -> dict[str, str]:
        """Every field of the request's posts: slots, their intents, `LEVEL:done`."""
        return cast(dict[str, str], await self.redis.hgetall(keys.posts(rid)))

    async def save_post(self, rid: str, slot: str, channel: str, ts: str) -> None:
        key = keys.posts(rid)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(key, slot, f"{channel} {ts}")
        pipe.hdel(key, _posting(slot))
        await pipe.execute()

    async def settle_post(self, rid: str, slot: str, found: tuple[str, str] | None) -> None:
        """An intent left by an attempt that died mid-post: the message it found, if any,
        takes the slot; the intent goes either way."""
        key = keys.posts(rid)
        pipe = self.redis.pipeline(transaction=True)
        if found is not None:
            pipe.hset(key, slot, f"{found[0]} {found[1]}")
        pipe.hdel(key, _posting(slot))
        await pipe.execute()

    async def level_done(self, rid: str, level: int) -> None:
        """Every post and page of `level` went out: a retry posts nothing more."""
        await self.redis.hset(keys.posts(rid), f"{level}:done", "1")

    # -- a run's thread: its run card, the line of calls without review, its link ------

    async def run_card(self, run_id: str) -> str | None:
        ts = await self.redis.hget(keys.run(run_id), CARD_TS)
        return None if ts is None else str(ts)

    async def set_run_card(self, run_id: str, ts: str) -> None:
        await self.redis.hset(keys.run(run_id), CARD_TS, ts)

    async def free_line(self, run_id: str) -> tuple[str | None, list[list[str]], int | None]:
        """The thread's latest line of calls without review: its ts, its calls, and when
        another line followed it (None while it is the thread's last line)."""
        got = cast(
            list[str | None],
            await self.redis.hmget(keys.run(run_id), [FREE_TS, FREE_CALLS, FREE_ENDED]),
        )
        return got[0], json.loads(got[1] or "[]"), int(got[2]) if got[2] else None

    async def set_free_line(
        self, run_id: str, ts: str, calls: list[list[str]], *, ended: int | None = None
    ) -> None:
        mapping = {FREE_TS: ts, FREE_CALLS: json.dumps(calls)}
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(keys.run(run_id), mapping=mapping)  # type: ignore[arg-type]
        if ended is None:
            pipe.hdel(keys.run(run_id), FREE_ENDED)
        else:
            pipe.hset(keys.run(run_id), FREE_ENDED, str(ended))
        await pipe.execute()

    async def end_free_line(self, run_id: str, at: int) -> None:
        """Another line followed, for an event at `at`: later calls start a new line."""
        if await self.redis.hexists(keys.run(run_id), FREE_TS):
            await self.redis.hset(keys.run(run_id), FREE_ENDED, str(at))

    async def thread_link(self, run_id: str) -> str | None:
        link = await self.redis.hget(keys.run(run_id), LINK)
        return str(link) if link else None

    async def set_thread_link(self, run_id: str, permalink: str) -> None:
        await self.redis.hset(keys.run(run_id), LINK, permalink)
