"""Integers past what JSON carries exactly, against the real bot (API, notifier, emulator).

With a live grant on refund, `amount` = -1 followed by 400 zeros made the grant check
raise OverflowError: a 500 after the request was stored and its notice published, and
a notice the notifier raised on at every retry, which restarted it in a loop while
every other card waited (issue 41). The API now refuses such a number before anything
is stored; a notice that raises anyway (a record filed before that check, or by a
writer without it) is parked where an operator sees it, and the next card is drawn.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import httpx
import pytest

from bot.core.args import payload
from bot.core.args.plainjson import MAX_EXACT_INT
from bot.core.models import Decision
from bot.core.states import Event
from bot.store import keys
from bot.store.figures.metrics import GROUP as METRICS_GROUP
from bot.store.stream.events import NOTIFIER_GROUP, EventBus
from tests.cli.test_cli import cli
from tests.e2e import conftest
from tests.e2e.conftest import Bot
from tests.e2e.test_slack_grants import grant
from tests.support.poll import eventually

AUTH = {"Authorization": "Bearer api-token-0123456789"}
HUGE = -(10**400)  # "-1" and 400 zeros, as the finding sent it


async def _filed(bot: Bot) -> tuple[list[str], int]:
    """Every request's keys and every event published: what a refused call must not add
    (the live grant's card and note may still be changing in Slack meanwhile)."""
    reqs = sorted(await bot.redis.keys("hitl:*req:*"))
    return reqs, sum([await bot.redis.xlen(keys.events(s)) for s in range(keys.SHARDS)])


@pytest.fixture(autouse=True)
def standing_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The e2e policy with standing approvals of up to 1 h on the medium tier."""
    policy: dict[str, Any] = copy.deepcopy(conftest.POLICY)
    policy["tiers"]["medium"]["standing"] = {"max": "1h", "scope": "requester"}
    monkeypatch.setattr(conftest, "POLICY", policy)


async def test_the_api_refuses_an_inexact_integer_before_storing_anything(bot: Bot) -> None:
    async with httpx.AsyncClient(base_url=bot.url, headers=AUTH) as http:
        first = await http.post(
            "/v1/approvals", json={"tool": "refund", "args": {"amount": 50, "to": "cust-1"}}
        )
        await grant(bot, first.json()["id"])  # the live grant the finding had
        before = await _filed(bot)
        bodies = [
            {"tool": "refund", "args": {"amount": HUGE, "to": "cust-1"}},
            {
                "tool": "refund",
                "args": {"to": "cust-1", "lines": [1, {"cents": MAX_EXACT_INT + 1}]},
            },
            {"tool": "refund", "candidates": [{"amount": 1}, {"amount": -MAX_EXACT_INT - 1}]},
        ]
        refused = [await http.post("/v1/approvals", json=b) for b in bodies]
        assert [r.status_code for r in refused] == [422, 422, 422], [r.text for r in refused]
        named = [json.dumps(r.json()) for r in refused]
        assert "argument amount is an integer beyond" in named[0]
        assert "argument lines[1].cents is an integer beyond" in named[1]
        assert "candidate 2" in named[2] and "argument amount is an integer" in named[2]
        assert str(HUGE) not in named[0]  # named, never echoed: it could be 4,000 digits
        assert await _filed(bot) == before  # nothing stored, nothing for Slack

        exact = {"amount": 50, "to": "cust-1", "ids": [MAX_EXACT_INT, -MAX_EXACT_INT]}
        held = await http.post("/v1/approvals", json={"tool": "refund", "args": exact})
    assert held.status_code == 201 and held.json()["args"] == exact


async def test_a_number_filed_around_the_check_is_outside_every_grant_and_gets_its_card(
    bot: Bot, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, this number raised OverflowError in the grant check at every delivery and
    stalled every card behind it; now it is no number to a grant's range."""
    caplog.set_level(logging.ERROR, logger="bot.slack.delivery.notifier")
    first = await bot.propose("refund", {"amount": 50, "to": "cust-1"})
    await grant(bot, first)
    with monkeypatch.context() as m:  # filed as before the check existed, straight to Redis
        m.setattr(payload, "inexact_number", lambda _: None)
        huge = await bot.propose("refund", {"amount": HUGE, "to": "cust-1"})
    normal = await bot.propose("refund", {"amount": 5, "to": "cust-2"})
    await bot.message_of(huge)  # drawn like any card: a person decides it
    await bot.message_of(normal)
    assert (await bot.requests.get(huge)).state.value == "pending_review"
    assert not [r for r in caplog.records if r.levelno == logging.ERROR]
    async with httpx.AsyncClient() as http:
        metrics = (await http.get(bot.url + "/metrics")).text
    assert "hitl_notices_parked_total 1" not in metrics
    assert 'hitl_task_restarts_total{task="notifier"} 0' in metrics


async def test_an_entry_another_writer_garbled_stops_no_reader_of_the_stream(
    bot: Bot, redis_url: str
) -> None:
    """A request hash and its notice written without the scripts, as a keyless writer
    could: neither the notifier nor the metrics collector can make sense of it, and both
    go on to the next notice (before, each raised on it at every retry)."""
    rid = "0badc0de0badc0de"
    shard = keys.shard_of(rid)
    await bot.redis.hset(keys.request(rid), mapping={"created_at": "x", "res_at": "1"})
    entry = {"kind": "request", "id": rid, "event": "approve", "state": "approved"}
    await bot.redis.xadd(keys.events(shard), entry | {"version": "²"})
    normal = await bot.propose("refund", {"amount": 5, "to": "cust-2"})
    await bot.message_of(normal)
    req = await bot.requests.get(normal)
    await bot.requests.transition(
        normal, Decision(event=Event.APPROVE, actor="UALICE", payload_hash=req.payload_hash)
    )

    async def counted() -> str | None:
        async with httpx.AsyncClient() as http:
            text = (await http.get(bot.url + "/metrics")).text
        return text if 'hitl_decisions_total{outcome="approved"} 1' in text else None

    text = await eventually(counted, what="the normal request's decision counted")
    assert "hitl_notices_parked_total 1" in text
    for task in ("notifier", "metrics"):  # each skipped it, never restarted over it
        assert f'hitl_task_restarts_total{{task="{task}"}} 0' in text

    async def all_acked() -> bool:  # the normal one's later notices may still be on their way
        groups = (NOTIFIER_GROUP, METRICS_GROUP)
        return all([await EventBus(bot.redis, g).backlog() == 0 for g in groups])

    await eventually(all_acked, what="both readers past every notice")
    assert (await bot.redis.hget(keys.request(rid), "card_error") or "").startswith("approve: ")
    code, out, err = await cli("show", rid, redis_url=redis_url)
    assert code == 2 and f"Request {rid} cannot be read from the store" in err, (out, err)
    assert "Traceback" not in out + err
