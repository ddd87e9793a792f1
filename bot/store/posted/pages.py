"""Which pages a request has sent, and the cluster-wide count of pages by outcome.

A page is marked in the request's posts hash (`keys.posts`, field
`page:LEVEL:SERVICE`) once the service took it, so a retried notice or a second
`serve` never sends it again, and the request's resolve knows what to close.
Values: `triggered`, `resolved`, or `refused` (the service or the setup said no for
good: nothing to resolve). The counters sit in the shard's metrics hash, which
`/metrics` sums (bot/store/figures/metrics.py).
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis

from bot.store import keys

PREFIX = "page:"
TRIGGERED, RESOLVED, REFUSED = "triggered", "resolved", "refused"
HELP = {"hitl_pages_total": "Pages sent to PagerDuty, Opsgenie or the pager webhook, by outcome."}


def _field(level: int, service: str) -> str:
    return f"{PREFIX}{level}:{service}"


class PageMarks:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def all(self, rid: str) -> dict[tuple[int, str], str]:
        """(level, service) -> its mark, for every page of the request."""
        got = cast(dict[str, str], await self.redis.hgetall(keys.posts(rid)))
        out = {}
        for field, value in got.items():
            if field.startswith(PREFIX):
                level, _, service = field.removeprefix(PREFIX).partition(":")
                out[(int(level), service)] = value
        return out

    async def mark(self, rid: str, level: int, service: str, value: str) -> None:
        await self.redis.hset(keys.posts(rid), _field(level, service), value)

    async def count(self, rid: str, service: str, action: str, outcome: str) -> None:
        field = f'hitl_pages_total{{action="{action}",outcome="{outcome}",service="{service}"}}'
        await self.redis.hincrby(keys.metrics(keys.shard_of(rid)), field, 1)
