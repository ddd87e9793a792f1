"""A month of requests made and decided through the store's own create and transitions,
as `hitl-bot policy suggest` and serve's hourly mining read them back: the seeding the
suggestion tests share (tests/cli/test_cli_policy_suggest.py,
tests/e2e/test_suggestions_home.py)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from bot.clock import FakeClock, wall_ms
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store.requests import RequestStore
from tests.support.keys import serve_signer

SEC = 1000
MIN = 60 * SEC
DAY = 86_400_000


@dataclass
class Seeded:
    """What the month holds, as the test made it."""

    ids: dict[str, list[str]] = field(default_factory=dict)  # by label
    waits: dict[str, list[int]] = field(default_factory=dict)  # ms to a person's decision
    args: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # approved as asked
    deciders: dict[str, dict[str, int]] = field(default_factory=dict)


class Month:
    """Calls made `gap_min` minutes apart (drawn from a seeded generator) on `clock`:
    by default one of its own that starts twenty days ago; a running bot's clock, so
    its sweeper sees each call decided before its timeout."""

    def __init__(
        self,
        redis: Redis,
        policy: Policy,
        clock: FakeClock | None = None,
        gap_min: tuple[int, int] = (1, 60),
    ) -> None:
        self.clock = clock or FakeClock(wall_ms() - 20 * DAY)
        self.store = RequestStore(redis, clock=self.clock, signer=serve_signer())
        self.policy = policy
        self.gap_min = gap_min
        self.rng = random.Random(47)
        self.seen = Seeded()

    async def call(
        self,
        label: str,
        tool: str,
        requester: str,
        args: dict[str, Any],
        event: Event,
        actor: str,
        wait_ms: int,
        groups: tuple[str, ...] = ("#approvals",),
        new_args: dict[str, Any] | None = None,
        second: str | None = None,
    ) -> str:
        self.clock.advance(self.rng.randint(*self.gap_min) * MIN)
        req = (
            await self.store.create(self.policy, tool=tool, args=args, requester=requester)
        ).request
        self.clock.advance(wait_ms)
        for who in (actor, second) if second else (actor,):
            await self.store.transition(
                req.id,
                Decision(
                    event=event,
                    actor=who,
                    actor_groups=groups,
                    payload_hash=req.payload_hash,
                    reason_code="too_risky" if event == Event.REJECT else None,
                    new_args=new_args,
                ),
            )
        s = self.seen
        s.ids.setdefault(label, []).append(req.id)
        s.waits.setdefault(label, []).append(wait_ms)
        if event == Event.APPROVE:
            s.args.setdefault(label, []).append(args)
        who_count = s.deciders.setdefault(label, {})
        who_count[actor] = who_count.get(actor, 0) + 1
        return req.id
