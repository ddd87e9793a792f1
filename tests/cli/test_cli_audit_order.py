"""`hitl-bot audit verify` reads a history's order, not only its links: a version going
back, an entry recorded twice or a request put back below its history are named, even
when whoever wrote them recomputed every link and the head."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.errors import HitlError
from bot.store import keys
from bot.store.requests import RequestStore
from tests.cli.test_cli import _history, _relink, cli


@pytest.fixture
def store(signed_store: RequestStore) -> RequestStore:
    """Decisions recorded as serve records them: signed, so only the order is wrong."""
    return signed_store


async def _entries(redis: Redis, rid: str) -> list[dict[str, object]]:
    return [json.loads(x) for x in await redis.lrange(keys.audit(rid), 0, -1)]


async def _refusal_at_an_old_version(redis: Redis, rid: str) -> None:
    # A refusal appended, re-chained, that claims the request was still at version 1.
    entries = await _entries(redis, rid)
    approve = entries[1]
    entries.append(
        {
            "kind": "refused",
            "event": "approve",
            "actor": "U7",
            "reason_code": "already_resolved",
            "from": "approved",
            "to": "approved",
            "payload_hash": approve["payload_hash"],
            "at": approve["at"],
            "seq": 3,
            "version": 1,
        }
    )
    await _relink(redis, rid, entries)


async def _approval_recorded_twice(redis: Redis, rid: str) -> None:
    # The sealed approval copied to the end and re-chained: its seal still verifies.
    entries = await _entries(redis, rid)
    await _relink(redis, rid, [*entries, {**entries[1], "seq": 3}])


async def _line_pushed_again(redis: Redis, rid: str) -> None:
    last = await redis.lindex(keys.audit(rid), -1) or ""
    await redis.rpush(keys.audit(rid), last)


async def _request_put_back(redis: Redis, rid: str) -> None:
    await redis.hset(keys.request(rid), "version", 1)


@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        (
            _refusal_at_an_old_version,
            "entry 3: version 1 after version 2 at entry 2: the version went backwards",
        ),
        (
            _approval_recorded_twice,
            "entry 3: repeats entry 2 (approve by U2 at version 2): an entry recorded twice",
        ),
        (
            _line_pushed_again,
            "entry 3: repeats entry 2 (approve by U2 at version 2): an entry recorded twice",
        ),
        (
            _request_put_back,
            "entry 2: the request stands at version 1, below version 2 its history reached",
        ),
    ],
    ids=["version-backwards", "relinked-duplicate", "pushed-duplicate", "request-put-back"],
)
async def test_audit_verify_names_an_entry_out_of_order(
    store: RequestStore,
    policy: Policy,
    redis: Redis,
    redis_url: str,
    tamper: Callable[[Redis, str], Awaitable[None]],
    said: str,
) -> None:
    ids = await _history(store, policy)
    await tamper(redis, ids[1])
    code, _, err = await cli("audit", "verify", redis_url=redis_url)
    assert code == 1, err
    assert f"request {ids[1]}: {said}" in err, err
    assert ids[0] not in err and ids[2] not in err


async def test_a_busy_untouched_history_is_in_order(
    store: RequestStore, policy: Policy, clock: FakeClock, redis_url: str
) -> None:
    """Moves of one step sharing a version, and the same refused click twice in one
    millisecond, are the bot's own order: nothing is named."""
    made = await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")
    rid = made.request.id
    for _ in range(2):  # each timeout escalates: two moves at one version
        clock.advance(10 * 60_000)
        current = await store.get(rid)
        await store.transition(rid, Decision(event=Event.TIMEOUT, fence=current.version))
    req = await store.get(rid)
    approve = Decision(event=Event.APPROVE, actor="ULEAD", payload_hash=req.payload_hash)
    await store.transition(rid, approve)
    for _ in range(2):
        with contextlib.suppress(HitlError):
            await store.transition(rid, approve)
    code, out, err = await cli("audit", "verify", redis_url=redis_url)
    assert code == 0, err
    assert "every audit chain intact" in out
