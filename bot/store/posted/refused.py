"""Notices Slack refused in a way a person can fix: said on the item, counted, kept.

A card Slack refuses with `not_in_channel` (the bot not invited), `missing_scope`,
`invalid_auth` after a token rotation, ... is posted once the fix is made, so its
notice stays pending and is retried (bot/slack/delivery/refusals.py). Meanwhile the item says why
in the same field a parked notice uses (`card_error`: `hitl-bot pending`, `show ID` and
`GET /v1/approvals/{id}` read it), `/metrics` counts each refusal by its error code,
and a flag makes sure the requester's run thread is told once, not at every retry. A
card posted at last clears both (`Cards.save_request_card`), as does the refused notice
delivered in the end.
"""

from __future__ import annotations

import re

from redis.asyncio import Redis

from bot.store import keys
from bot.store.posted.parked import FIELD, item_key
from bot.store.stream.events import Notice

COUNTER = "hitl_slack_refusals_total"
HELP = {
    COUNTER: "Slack Web API calls the notifier had refused, by error code (retried with "
    "backoff unless docs/troubleshooting.md lists the code as given up)."
}
TOLD = "card_error_told"  # on a request's hash: its run's thread was told of the refusal
_NOT_A_CODE = re.compile(r"[^a-z0-9_.]")


def code_label(error: str) -> str:
    """Slack's error code as a label value: never anything that could break the line."""
    return _NOT_A_CODE.sub("_", error.lower())[:64] or "unknown"


class RefusalMarks:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def count(self, n: Notice, error: str) -> None:
        """One more refusal with `error`, beside the notice's stream (its slot)."""
        field = f'{COUNTER}{{error="{code_label(error)}"}}'
        await self.redis.hincrby(keys.metrics(keys.shard_of_key(n.stream)), field, 1)

    async def say(self, n: Notice, why: str) -> None:
        """Why `n`'s item has no message in Slack (yet): "EVENT: why"."""
        key = item_key(n)
        if key is not None and await self.redis.exists(key):  # never a stray hash
            await self.redis.hset(key, FIELD, f"{n.event}: {why}")

    async def first_telling(self, rid: str) -> bool:
        """True the first time it is asked for request `rid` since its card was last
        posted: the one time its run's thread is told."""
        key = keys.request(rid)
        if not await self.redis.exists(key):
            return False
        return bool(await self.redis.hsetnx(key, TOLD, "1"))

    async def clear(self, n: Notice) -> None:
        """The refused notice was delivered after all: its item has nothing to say."""
        key = item_key(n)
        if key is not None:
            await self.redis.hdel(key, FIELD, TOLD)
