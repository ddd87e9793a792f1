"""Audit entries are stored without the empty values a reader puts back and without a
first entry's all-zero `prev`; they verify, read and export exactly as entries stored
whole (every value, the zero `prev`) do, and a list holding both forms verifies whole."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import AuditEntry, Decision
from bot.core.policy import Policy
from bot.core.proof.chain import GENESIS, line_hash
from bot.core.states import Event
from bot.errors import HitlError
from bot.store import audit, keys
from bot.store.requests import RequestStore
from bot.store.scripts import CREATE, TRANSITION_SCRIPTS
from tests.support.decisions import approve

# The audit helper storing entries whole: every value, empty or not, and the zero prev
# of a first entry. The oracle the compact form is compared against.
WHOLE_AUDIT = """local function audit(A, h, e)
  local seq = tonumber(h.audit_seq or '0') + 1
  e.seq = seq
  e.prev = (h.audit_head ~= nil and h.audit_head ~= '') and h.audit_head or string.rep('0', 40)
  local line = cjson.encode(e)
  redis.call('RPUSH', A, line)
  h.audit_head = redis.sha1hex(line)
  h.audit_seq = tostring(seq)
end
"""
TOKEN = "w1-claim-token"  # a claim's fence is audited: the same in both runs of a flow
HELPER = re.compile(r"local function audit\(A, h, e\)\n.*?\nend\n", re.DOTALL)


def storing_whole(script: str) -> str:
    assert len(HELPER.findall(script)) == 1
    return HELPER.sub(lambda _: WHOLE_AUDIT, script)


def whole_form(redis: Redis, store: RequestStore, clock: FakeClock) -> RequestStore:
    """A store writing audit entries whole, its ids shared with `store`."""
    old = RequestStore(redis, clock=clock, ids=store.ids)
    old._create = redis.register_script(storing_whole(CREATE))
    old._scripts = {
        name: redis.register_script(storing_whole(s)) for name, s in TRANSITION_SCRIPTS.items()
    }
    return old


async def refused(store: RequestStore, rid: str, d: Decision) -> None:
    with contextlib.suppress(HitlError):
        await store.transition(rid, d)


Flow = Callable[[RequestStore, Policy, FakeClock], Awaitable[str]]


async def pending(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    args = {"amount": 5}
    return (await store.create(policy, tool="refund", args=args, requester="U1")).request.id


async def executed(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    await store.transition(req.id, approve(req.payload_hash, view_hash="v" * 8))
    await store.transition(req.id, Decision(event=Event.CLAIM, actor="w1", claim_token=TOKEN))
    await store.transition(req.id, Decision(event=Event.SUCCEED, detail=""))
    return req.id


async def rolled_back(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    await store.transition(req.id, approve(req.payload_hash))
    await store.transition(req.id, Decision(event=Event.CLAIM, actor="w1", claim_token=TOKEN))
    await store.transition(req.id, Decision(event=Event.FAIL, detail="", has_compensation=True))
    await store.transition(req.id, Decision(event=Event.ROLLBACK_OK, detail="undone"))
    return req.id


async def rejected_after_refusals(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    await refused(store, req.id, approve(req.payload_hash, actor="U1"))  # one's own
    await refused(store, req.id, approve("0" * 64))  # a stale payload, no view hash
    reject = Decision(
        event=Event.REJECT, actor="UBOSS", payload_hash=req.payload_hash, reason_code="policy"
    )
    await store.transition(req.id, reject)
    await refused(store, req.id, approve(req.payload_hash, actor="UOPS"))  # too late
    return req.id


async def timed_out(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    for _ in range(3):  # two escalations, then no level left
        current = await store.get(req.id)
        assert current.expires_at is not None
        clock.advance(current.expires_at - clock.now)
        await store.transition(req.id, Decision(event=Event.TIMEOUT, fence=current.version))
    return req.id


async def edited_then_cancelled(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    req = (await store.create(policy, tool="refund", args={"amount": 5}, requester="U1")).request
    edit = Decision(
        event=Event.EDIT_AND_APPROVE,
        actor="UBOSS",
        payload_hash=req.payload_hash,
        new_args={"amount": 4},
    )
    await store.transition(req.id, edit)
    await store.transition(req.id, Decision(event=Event.CANCEL, actor="UOPS", text=""))
    return req.id


async def free_and_claimed(store: RequestStore, policy: Policy, clock: FakeClock) -> str:
    made = await store.create(
        policy, tool="move_claw", args={}, requester="", claim_as="w1", claim_token=TOKEN
    )
    assert made.claimed
    return made.request.id


FLOWS = [
    pending,
    executed,
    rolled_back,
    rejected_after_refusals,
    timed_out,
    edited_then_cancelled,
    free_and_claimed,
]


async def exported(store: RequestStore, rid: str) -> list[dict[str, Any]]:
    out = [json.loads(x) async for x in audit.export(store)]
    return [e for e in out if e["request_id"] == rid]


def comparable(e: dict[str, Any]) -> dict[str, Any]:
    """An exported entry less what differs between two runs of one flow: the request id,
    and a later entry's link (the hash of a line that is now shorter)."""
    drop = {"request_id"} | ({"prev"} if e["seq"] > 1 else set())
    return {k: v for k, v in e.items() if k not in drop}


@pytest.mark.parametrize("flow", FLOWS, ids=[f.__name__ for f in FLOWS])
async def test_entries_are_stored_shorter_and_export_as_entries_stored_whole_do(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis, flow: Flow
) -> None:
    # Each run on a clock of its own, both starting at the same instant.
    old_clock = FakeClock()
    old = whole_form(redis, store, old_clock)
    before = await flow(old, policy, old_clock)
    after = await flow(store, policy, clock)
    old_lines, new_lines = await audit.lines(redis, before), await audit.lines(redis, after)
    assert len(old_lines) == len(new_lines) >= 1

    first = json.loads(new_lines[0])
    assert "prev" not in first and "" not in first.values(), first
    assert json.loads(old_lines[0])["prev"] == GENESIS
    assert sum(map(len, new_lines)) < sum(map(len, old_lines))
    for line in new_lines[1:]:
        assert len(json.loads(line)["prev"]) == 40

    old_out, new_out = await exported(store, before), await exported(store, after)
    assert [comparable(e) for e in new_out] == [comparable(e) for e in old_out]
    assert new_out[0]["prev"] == GENESIS
    # Readers (`/hitl audit`, the App Home, history threads) see the same entries too.
    olds, news = await audit.entries(redis, before), await audit.entries(redis, after)
    assert [e.model_dump(exclude={"prev"}) for e in news] == [
        e.model_dump(exclude={"prev"}) for e in olds
    ]
    assert news[0].prev == GENESIS
    assert await audit.verify_request(redis, before) is None
    assert await audit.verify_request(redis, after) is None


async def test_a_new_request_stores_one_entry_without_empty_values_or_prev(
    store: RequestStore, policy: Policy, redis: Redis
) -> None:
    rid = await pending(store, policy, FakeClock())
    (line,) = await audit.lines(redis, rid)
    entry = json.loads(line)
    assert "prev" not in entry and "" not in entry.values()
    assert {"from", "reason_code"}.isdisjoint(entry)
    assert AuditEntry.parse(line).reason_code == ""  # read back as it always was
    assert (await store.get(rid)).audit_head == line_hash(line)
    assert await audit.verify_request(redis, rid) is None


async def test_a_list_begun_whole_and_continued_compact_verifies_whole(
    store: RequestStore, policy: Policy, clock: FakeClock, redis: Redis
) -> None:
    rid = await pending(whole_form(redis, store, clock), policy, clock)
    (first,) = await audit.lines(redis, rid)
    assert '"prev":"' + GENESIS in first and '"reason_code":""' in first
    req = await store.get(rid)
    await refused(store, rid, approve(req.payload_hash, actor="U1"))
    await store.transition(rid, approve(req.payload_hash))
    lines = await audit.lines(redis, rid)
    assert len(lines) == 3 and lines[0] == first
    assert "view_hash" not in json.loads(lines[1])  # the refusal, written now: stored shorter
    assert await audit.verify_request(redis, rid) is None
    entries = [json.loads(x) async for x in audit.export(store)]
    assert entries[0]["prev"] == GENESIS and entries[1]["prev"] == line_hash(first)


Tamper = Callable[[Redis, str], Awaitable[None]]


async def _edit_first(redis: Redis, rid: str) -> None:
    first = await redis.lindex(keys.audit(rid), 0) or ""
    await redis.lset(keys.audit(rid), 0, first.replace('"actor":"U1"', '"actor":"U9"'))


async def _drop_first(redis: Redis, rid: str) -> None:
    await redis.lpop(keys.audit(rid))


async def _drop_middle(redis: Redis, rid: str) -> None:
    await redis.lrem(keys.audit(rid), 1, await redis.lindex(keys.audit(rid), 1) or "")


async def _unlink_later(redis: Redis, rid: str) -> None:
    """A forger strips entry 2's link, so it looks like a first entry, and re-chains the
    rest and the head: a missing prev is accepted on the first entry only."""
    entries = [json.loads(x) for x in await redis.lrange(keys.audit(rid), 0, -1)]
    del entries[1]["prev"]
    lines = [json.dumps(entries[0], separators=(",", ":"))]
    lines.append(json.dumps(entries[1], separators=(",", ":")))
    prev = line_hash(lines[1])
    for e in entries[2:]:
        lines.append(json.dumps({**e, "prev": prev}, separators=(",", ":")))
        prev = line_hash(lines[-1])
    await redis.delete(keys.audit(rid))
    await redis.rpush(keys.audit(rid), *lines)
    await redis.hset(keys.request(rid), "audit_head", prev)


async def _genesis_on_later(redis: Redis, rid: str) -> None:
    """Entry 2 claims to start a chain with the zero link."""
    second = json.loads(await redis.lindex(keys.audit(rid), 1) or "{}")
    line = json.dumps({**second, "prev": GENESIS}, separators=(",", ":"))
    await redis.lset(keys.audit(rid), 1, line)


@pytest.mark.parametrize(
    ("tamper", "entry"),
    [
        (_edit_first, 1),
        (_drop_first, 1),
        (_drop_middle, 1),
        (_unlink_later, 2),
        (_genesis_on_later, 1),
    ],
)
async def test_tampering_with_stored_entries_is_still_found(
    store: RequestStore,
    policy: Policy,
    clock: FakeClock,
    redis: Redis,
    tamper: Tamper,
    entry: int,
) -> None:
    rid = await executed(store, policy, clock)
    assert "prev" not in json.loads(await redis.lindex(keys.audit(rid), 0) or "")
    await tamper(redis, rid)
    broken = await audit.verify_request(redis, rid)
    assert broken is not None and broken.seq == entry, broken
