"""`hitl-bot policy diff` replays a recorded week, as a real process against the test
Valkey: the week is made through the store's own create and decisions, on a clock
that starts nine days ago."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock, wall_ms
from bot.core.models import Decision, RiskTier
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.store.requests import RequestStore
from tests.cli.test_cli import cli
from tests.support.keys import serve_signer
from tests.support.policy_pair import NEW, OLD, dump

MIN = 60_000
DAY = 86_400_000


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "old.yaml").write_text(dump(OLD))
    (tmp_path / "new.yaml").write_text(dump(NEW))
    return str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml")


async def _week(redis: Redis) -> dict[str, str]:
    """Nine days of requests under OLD, each decided (or not) as a person would have."""
    clock = FakeClock(wall_ms() - 9 * DAY)
    store = RequestStore(redis, clock=clock, signer=serve_signer())
    policy = parse_policy(OLD)
    made: dict[str, str] = {}

    async def make(name: str, tool: str, args: dict[str, Any], **kw: Any) -> str:
        req = (
            await store.create(policy, tool=tool, args=args, requester="billing-agent", **kw)
        ).request
        made[name] = req.id
        return req.id

    async def decide(rid: str, event: Event, actor: str, after_min: int) -> None:
        clock.advance(after_min * MIN)
        req = await store.get(rid)
        await store.transition(
            rid,
            Decision(
                event=event,
                actor=actor,
                actor_groups=("#approvals",),
                payload_hash=req.payload_hash,
                reason_code="too_risky" if event == Event.REJECT else None,
            ),
        )

    # Nine days ago: outside a 7-day look back, so never counted.
    await decide(await make("too_old", "refund", {"amount": 50}), Event.APPROVE, "UALICE", 2)
    clock.advance(3 * DAY)  # six days ago
    await decide(await make("small", "refund", {"amount": 50}), Event.APPROVE, "UALICE", 2)
    clock.advance(DAY)
    await decide(await make("slow", "refund", {"amount": 500}), Event.APPROVE, "UBOB", 20)
    await decide(await make("rejected", "refund", {"amount": 600}), Event.REJECT, "UALICE", 1)
    clock.advance(DAY)
    await decide(await make("big", "refund", {"amount": 5000}), Event.APPROVE, "UBOSS", 5)
    # the caller raised this one to high: replayed at high, never as an unreviewed low
    raised = await make("raised", "refund", {"amount": 10}, risk=RiskTier.HIGH)
    await decide(raised, Event.APPROVE, "UBOSS", 1)
    clock.advance(DAY)
    await make("email1", "send_email", {"to": "a@example.com"})  # review: none
    await make("email2", "send_email", {"to": "b@example.com"})
    clock.advance(DAY)
    await make("deploy", "deploy", {"version": "1.2"})  # left waiting
    timed_out = await make("timed_out", "refund", {"amount": 700})
    clock.advance(31 * MIN)
    await store.timeout_many([(timed_out, 1)])
    assert (await store.get(timed_out)).state.value == "auto_rejected"
    return made


async def test_policy_diff_on_a_recorded_week(
    redis: Redis, redis_url: str, files: tuple[str, str]
) -> None:
    made = await _week(redis)
    code, out, err = await cli("policy", "diff", *files, "--since", "7d", "--json",
                               redis_url=redis_url)  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert d["requests"] == 9  # the one made nine days ago is left out
    tiers = {(t["old"], t["new"]): t["requests"] for t in d["tiers"]}
    assert tiers == {
        ("medium", "low"): 1,
        ("medium", "medium"): 3,
        ("high", "high"): 2,
        ("low", "low"): 2,
        ("critical", "critical"): 1,
    }
    assert d["review"] == {"dropped": 1, "added": 2}
    assert d["kinds"] == {"approvers": 2, "timeout": 3}
    to_auto = {c["request_id"]: c for c in d["to_auto"]}
    assert set(to_auto) == {made["small"], made["slow"]}
    assert to_auto[made["small"]]["becomes"] == "no_review"
    assert to_auto[made["small"]]["decided_by"] == "UALICE"
    slow = to_auto[made["slow"]]
    assert (slow["becomes"], slow["waited_ms"], slow["new_chain_ms"]) == (
        "auto_rejected", 20 * MIN, 10 * MIN,
    )  # fmt: skip
    assert {c["request_id"] for c in d["to_person"]} == {made["email1"], made["email2"]}
    assert d["unlike_recorded"] == [] and d["refused"] == []

    code, out, _ = await cli("policy", "diff", *files, redis_url=redis_url)
    assert code == 0
    assert "Replayed 9 requests" in out
    assert "Review: 1 would no longer go to a person (review: none); 2 would now go to one." in out
    assert "Decided by a person, resolved without one under the new policy (2):" in out
    assert "approved by UBOB after 20m" in out
    assert "auto_rejected after 10m" in out
    assert "Resolved without a person, sent to one under the new policy (2):" in out


async def test_a_bad_policy_file_is_named_and_an_empty_period_said(
    redis: Redis, redis_url: str, files: tuple[str, str], tmp_path: Path
) -> None:
    old, new = files
    code, _, err = await cli("policy", "diff", old, str(tmp_path / "nope.yaml"),
                             redis_url=redis_url)  # fmt: skip
    assert code == 2
    assert f"{tmp_path / 'nope.yaml'}: cannot read the policy file" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(dump({**NEW, "default_tier": "urgent"}))
    code, _, err = await cli("policy", "diff", str(bad), new, redis_url=redis_url)
    assert code == 2 and f"{bad}: default_tier:" in err

    code, out, _ = await cli("policy", "diff", old, new, "--since", "7d", redis_url=redis_url)
    assert code == 0 and "No requests were made since" in out
    code, out, _ = await cli("policy", "diff", old, new, "--json", redis_url=redis_url)
    assert code == 0 and json.loads(out)["requests"] == 0
