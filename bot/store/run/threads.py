"""The thread index: which approval cards sit in (or head) each Slack thread.

A reply in a thread may decide a card there (bot/slack/listeners/replies.py); the index tells
which requests those are, and whether the bot posted in the thread at all. Which run
a thread is the home of is the run's (`RunStore.by_thread`).
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.store import keys
from bot.store.run.runs import RUN_TTL_S

CARDS_TTL_S = RUN_TTL_S  # a thread's cards are found as long as its run is kept


class ThreadIndex:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def add_card(self, channel: str, thread_ts: str, rid: str) -> None:
        key = keys.thread_cards(channel, thread_ts)
        pipe = self.redis.pipeline(transaction=True)
        pipe.sadd(key, rid)
        pipe.expire(key, CARDS_TTL_S)
        await pipe.execute()

    async def cards(self, channel: str, thread_ts: str) -> set[str]:
        """The request ids whose card sits in the thread."""
        key = keys.thread_cards(channel, thread_ts)
        return set(cast(set[str], await self.redis.smembers(key)))

    async def add_question(self, channel: str, thread_ts: str, qid: str) -> None:
        """The question whose card heads the thread: a reply there answers it."""
        await self.redis.set(keys.thread_question(channel, thread_ts), qid, ex=CARDS_TTL_S)

    async def question(self, channel: str, thread_ts: str) -> str | None:
        return cast(str | None, await self.redis.get(keys.thread_question(channel, thread_ts)))

    async def has_cards(self, channel: str, thread_ts: str) -> bool:
        return bool(await self.redis.exists(keys.thread_cards(channel, thread_ts)))
