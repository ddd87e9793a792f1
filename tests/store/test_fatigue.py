"""Approval-fatigue figures from a seeded history: requests made and decided through the
store's real scripts, with a fake clock, read back as the report shows them."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.errors import HitlError
from bot.store.figures import fatigue
from bot.store.posted.cards import Cards
from bot.store.requests import RequestStore

DAY = 86_400_000


async def seed(store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis) -> None:
    """A week ago: one medium approval. This week: medium approved in 1 s (too fast for
    a 2-line card: 2.6 s), approved in 30 s, rejected in 10 s, one left to time out; a
    critical call approved by a quorum of two; a low call the policy lets through."""
    cards = Cards(redis)

    async def decide(args: dict[str, object], *steps: tuple[int, str, Event]) -> str:
        tool = "deploy" if "service" in args else "refund"
        req = (await store.create(policy, tool=tool, args=args, requester="UAGENT")).request
        clock.advance(2_000)  # the notifier takes a moment to post the card
        await cards.save_request_card(req.id, "CAPPROVALS", "1.1", at=clock())
        for wait_ms, actor, event in steps:
            clock.advance(wait_ms)
            code = "too_risky" if event == Event.REJECT else None
            d = Decision(event=event, actor=actor, payload_hash=req.payload_hash, reason_code=code)
            await store.transition(req.id, d)
        return req.id

    await decide({"amount": 7}, (20_000, "UOLD", Event.APPROVE))
    clock.advance(8 * DAY)
    fast = await decide({"amount": 5}, (1_000, "UANA", Event.APPROVE))
    with pytest.raises(HitlError):  # refused (already decided): audited, not a decision
        await decide_again(store, fast, "UBOB")
    await decide({"amount": 6}, (30_000, "UANA", Event.APPROVE))
    await decide({"amount": 8}, (10_000, "UBOB", Event.REJECT))
    left = (await store.create(policy, tool="refund", args={"amount": 9}, requester="U")).request
    for _ in range(3):  # review, on-call, lead: then the tier's default
        clock.advance(10 * 60_000)
        now = await store.get(left.id)
        await store.transition(left.id, Decision(event=Event.TIMEOUT, fence=now.version))
    svc = {"service": "api", "version": "1.2.3"}
    await decide(svc, (5_000, "UANA", Event.APPROVE), (3_000, "UCAT", Event.APPROVE))
    await store.create(policy, tool="move_claw", args={"x": 1}, requester="UAGENT")
    clock.advance(60_000)


async def decide_again(store: RequestStore, rid: str, actor: str) -> None:
    req = await store.get(rid)
    await store.transition(
        rid, Decision(event=Event.APPROVE, actor=actor, payload_hash=req.payload_hash)
    )


@pytest.mark.parametrize("batch", [500, 2])  # one round trip, or many
async def test_the_weeks_figures_by_tier_and_approver(
    store: RequestStore,
    policy: Policy,
    clock: FakeClock,
    redis: Redis,
    batch: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fatigue, "BATCH", batch)
    await seed(store, policy, clock, redis)
    got = (await fatigue.figures(store, clock() - 7 * DAY, clock())).as_json()
    medium, critical, low = got["tiers"]["medium"], got["tiers"]["critical"], got["tiers"]["low"]
    assert list(got["tiers"]) == ["low", "medium", "critical"]
    assert medium["decisions"] == 3 and medium["too_fast"] == 1
    assert (medium["median_s"], medium["p90_s"]) == (10.0, 30.0)
    assert medium["outcomes"]["approved"] == 2 and medium["outcomes"]["rejected"] == 1
    assert medium["outcomes"]["auto_rejected"] == 1
    assert medium["busiest"] == {"approver": "UANA", "share": 2 / 3}
    assert medium["approvers"]["UANA"]["too_fast"] == 1
    assert medium["approvers"]["UBOB"]["rejection_rate"] == 1.0
    assert "UOLD" not in medium["approvers"]  # last week's
    assert critical["outcomes"]["approved"] == 2 and critical["too_fast"] == 0
    assert (critical["median_s"], critical["p90_s"]) == (5.0, 8.0)
    assert critical["busiest"] == {"approver": "UANA", "share": 0.5}
    assert low["outcomes"]["no_review"] == 1 and low["decisions"] == 0
    assert low["median_s"] is None and low["busiest"] is None


async def test_week_over_week(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    await seed(store, policy, clock, redis)
    got = (await fatigue.figures(store, clock() - 14 * DAY, clock())).as_json()
    this, last = got["weeks"]
    assert this["tiers"]["medium"]["approved"] == 2 and this["tiers"]["medium"]["rejected"] == 1
    assert last["tiers"] == {"medium": {o: int(o == "approved") for o in this["tiers"]["medium"]}}
    assert got["tiers"]["medium"]["approvers"]["UOLD"]["decisions"] == 1
