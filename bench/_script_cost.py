"""Server time per transition, script by script, against a no-op EVALSHA in the same run.

Each step runs `m` times in a row on one connection, between a CONFIG RESETSTAT and an
INFO commandstats: Valkey's `usec_per_call` for `evalsha` is then that script's time on
the server alone (the commands it runs inside included; the network and the client left
out). Used by bench/store_throughput.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from redis.asyncio import Redis

from bot.core.models import SYSTEM, ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.core.states import Event
from bot.gate.execution import report_executed
from bot.store import keys
from bot.store.requests import RequestStore

LEVEL = {"review_timeout": "4h", "reviewers": {"channels": ["#hitl-approvals"]}, "approvers": ["*"]}
POLICY: Policy = parse_policy(
    {
        "tiers": {t: LEVEL for t in ("low", "medium", "high", "critical")},
        "tools": {"note": {"tier": "low", "review": "none"}, "refund": {"tier": "medium"}},
    }
)
ARGS = {"amount": 42, "currency": "EUR", "customer": "cus_123", "reason": "damaged"}
GROUPS = ("#hitl-approvals",)
FLOOR = "contract skeleton (floor)"


# The floor under every transition: what its contract alone makes Valkey do (read the
# request, append one audit line chained by its sha1, write the fields that moved, move
# the deadline, wake the waiters, publish the event, a lean reply), with no guard, no
# review terms and no quorum. Run on a copy of a stored request, so its cost is a real
# hash's. Not the bot's code: a yardstick for how far below its cost a target may go.
SKELETON = """
local raw = redis.call('HGETALL', KEYS[1])
local h = {}
for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
local v = tonumber(h.version) + 1
local line = cjson.encode({at = ARGV[1], actor = 'U0', kind = 'transition', event = 'approve',
  from = h.state, to = 'approved', version = v, payload_hash = h.payload_hash,
  prev = h.audit_head})
redis.call('RPUSH', KEYS[2], line)
redis.call('HSET', KEYS[1], 'version', v, 'audit_head', redis.sha1hex(line), 'res_actor', 'U0')
redis.call('ZREM', KEYS[3], 'request:' .. h.id .. '|' .. (v - 1))
redis.call('ZADD', KEYS[3], ARGV[1], 'request:' .. h.id .. '|' .. v)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', 16, v .. '-0', 'state', 'approved')
redis.call('EXPIRE', KEYS[4], 600)
redis.call('XADD', KEYS[5], 'MAXLEN', '~', 10000, '*', 'kind', 'request', 'id', h.id,
  'version', v, 'event', 'approve', 'state', 'approved')
return {'ok', cjson.encode({id = h.id, state = 'approved', version = v})}
"""
SKELETON_KEYS = [f"bench:skeleton:{k}" for k in ("req", "audit", "due", "wake", "events")]


async def _evalsha_us(r: Redis, m: int, step: Callable[[int], Awaitable[Any]]) -> float:
    await r.config_resetstat()
    for i in range(m):
        await step(i)
    stats = cast(dict[str, dict[str, float]], await r.info("commandstats"))
    row = stats.get("cmdstat_evalsha", {"usec": 0.0, "calls": 1.0})
    return float(row["usec"]) / float(row["calls"])


async def script_costs(url: str, m: int = 2_000) -> dict[str, float]:
    """name -> server us per call; "noop" is the baseline."""
    r = Redis.from_url(url, decode_responses=True)
    store = RequestStore(r)
    noop = r.register_script("return 1")
    await noop()
    pending: list[ActionRequest] = []
    freed: list[ActionRequest] = []
    to_cancel: list[ActionRequest] = []

    async def create(i: int) -> None:
        made = await store.create(POLICY, tool="refund", args=ARGS, requester="U0REQUEST")
        pending.append(made.request)

    async def create_claimed(i: int) -> None:
        made = await store.create(
            POLICY, tool="note", args={"text": str(i)}, requester="agent", claim_as=SYSTEM
        )
        freed.append(made.request)

    async def approve(i: int) -> None:
        req = pending[i]
        d = Decision(event=Event.APPROVE, actor="U0APPROVER", actor_groups=GROUPS)
        d = d.model_copy(update={"payload_hash": req.payload_hash})
        await store.transition(req.id, d)

    async def report(i: int) -> None:
        req = freed[i]
        await report_executed(
            store, req.id, ok=True, detail="ok", compensated=None, actor=SYSTEM, fence=req.fence
        )

    async def fill(i: int) -> None:
        made = await store.create(POLICY, tool="refund", args=ARGS, requester="U0REQUEST")
        to_cancel.append(made.request)

    async def cancel(i: int) -> None:
        d = Decision(event=Event.CANCEL, actor=SYSTEM, reason_code="run_stopped")
        await store.transition(to_cancel[i].id, d)

    out = {"noop": await _evalsha_us(r, m, lambda i: noop())}
    out["create (pending review)"] = await _evalsha_us(r, m, create)
    out["decide (approve)"] = await _evalsha_us(r, m, approve)
    out["create + claim (free call)"] = await _evalsha_us(r, m, create_claimed)
    out["report (succeed)"] = await _evalsha_us(r, m, report)
    for i in range(m):
        await fill(i)
    out["cancel"] = await _evalsha_us(r, m, cancel)
    await r.hset(SKELETON_KEYS[0], mapping=await r.hgetall(keys.request(to_cancel[0].id)))
    skeleton = r.register_script(SKELETON)
    out[FLOOR] = await _evalsha_us(r, m, lambda i: skeleton(SKELETON_KEYS, [1000 + i]))
    await r.flushdb()
    await r.aclose()
    return out


def print_costs(costs: dict[str, float]) -> None:
    base = costs["noop"]
    print("\n(c) server time per call, one connection, sequential (INFO commandstats)")
    print(f"  {'script':<28}{'us':>8}{'vs noop':>9}")
    for name, us in costs.items():
        print(f"  {name:<28}{us:>8.1f}{us / base:>8.1f}x")
