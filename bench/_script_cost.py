"""Server time per transition, script by script, against the contract's floor in the same run.

Each step runs `m` times, each call followed by one of the contract skeleton (below), so
both meet the same load on the machine; SLOWLOG (every command logged, its duration
measured by Valkey around the command alone) gives each call's time on the server,
the commands it runs inside included, the network and the client left out. A step's
figure is the median of its calls, and its ratio to the skeleton's median over the
calls between them: a busy moment on a shared machine moves a few calls of both, not
the ratio. Used by bench/store_throughput.py.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from bot.core.models import SYSTEM, ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.core.states import Event
from bot.gate.execution import report_executed
from bot.store import keys
from bot.store.codec import WATCHED
from bot.store.requests import RequestStore
from bot.store.scripts import CANCEL, CLAIM, CREATE, DECIDE, REPORT, WAIT, WAKE_TTL_S

LEVEL = {"review_timeout": "4h", "reviewers": {"channels": ["#hitl-approvals"]}, "approvers": ["*"]}
POLICY: Policy = parse_policy(
    {
        "tiers": {t: LEVEL for t in ("low", "medium", "high", "critical")},
        "tools": {"note": {"tier": "low", "review": "none"}, "refund": {"tier": "medium"}},
    }
)
ARGS = {"amount": 42, "currency": "EUR", "customer": "cus_123", "reason": "damaged"}
GROUPS = ("#hitl-approvals",)
NOOP = "return 1"
CREATE_STEP, APPROVE, CLAIM_STEP = "create (pending review)", "decide (approve)", "claim"
WATCHED_APPROVE = "decide (approve, waited on)"  # a waiter made its wake stream: woken


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


async def _paired(
    r: Redis, m: int, script: str, step: Callable[[int], Awaitable[Any]], floor: AsyncScript
) -> tuple[float, float]:
    """(median server us of `script` as `step` calls it, median of the floor's), the two
    called in turn `m` times."""
    await r.config_set("slowlog-max-len", 4 * m + 64)
    await r.config_set("slowlog-log-slower-than", 0)
    await r.slowlog_reset()
    for i in range(m):
        await step(i)
        await floor(SKELETON_KEYS, [1000 + i])
    await r.config_set("slowlog-log-slower-than", 10_000)
    got: dict[str, list[int]] = {}
    for entry in await r.slowlog_get(4 * m + 64):
        command = entry["command"]  # bytes, whatever the client decodes
        name, _, rest = (command.decode() if isinstance(command, bytes) else command).partition(" ")
        if name.lower() == "evalsha":
            got.setdefault(rest[:40], []).append(int(entry["duration"]))
    return statistics.median(got[_sha(script)]), statistics.median(got[_sha(SKELETON)])


def _sha(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()


async def script_costs(url: str, m: int = 2_000) -> dict[str, tuple[float, float]]:
    """name -> (server us per call, the floor's us over the same stretch); "noop" is the
    baseline of a script that only answers."""
    r = Redis.from_url(url, decode_responses=True)
    store = RequestStore(r)
    noop = r.register_script(NOOP)
    pending: list[ActionRequest] = []
    approved: list[ActionRequest] = []
    freed: list[ActionRequest] = []
    to_cancel: list[ActionRequest] = []
    watched: list[ActionRequest] = []

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
        approved.append((await store.transition(req.id, d)).request)

    async def approve_watched(i: int) -> None:
        req = watched[i]
        d = Decision(event=Event.APPROVE, actor="U0APPROVER", actor_groups=GROUPS)
        await store.transition(req.id, d.model_copy(update={"payload_hash": req.payload_hash}))

    async def claim(i: int) -> None:  # as an executor claims (bot/gate/claims.py)
        req = approved[i]
        d = Decision(event=Event.CLAIM, actor="executor", claim_token=f"token{i}")
        await store.transition(req.id, d, expect_version=req.version)

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

    # The floor runs on a copy of a stored request in review, so its read is a real one's.
    await fill(0)
    await r.hset(SKELETON_KEYS[0], mapping=await r.hgetall(keys.request(to_cancel.pop().id)))
    floor = r.register_script(SKELETON)
    for text in (SKELETON, NOOP, CREATE, DECIDE, CLAIM, REPORT, CANCEL):
        await r.script_load(text)  # loaded before anything is timed: no NOSCRIPT round
    out = {"noop": await _paired(r, m, NOOP, lambda i: noop(), floor)}
    out[CREATE_STEP] = await _paired(r, m, CREATE, create, floor)
    out[APPROVE] = await _paired(r, m, DECIDE, approve, floor)
    out[CLAIM_STEP] = await _paired(r, m, CLAIM, claim, floor)
    arm = r.register_script(WAIT)  # as a waiter does before it reads (bot/store/waiting.py)
    for _ in range(m):
        made = await store.create(POLICY, tool="refund", args=ARGS, requester="U0REQUEST")
        watched.append(made.request)
        ks = keys.request_keys(made.request.id)
        await arm(keys=[ks[0], ks[keys.REQUEST_KEYS.index("wake")]], args=[WAKE_TTL_S, WATCHED])
    out[WATCHED_APPROVE] = await _paired(r, m, DECIDE, approve_watched, floor)
    out["create + claim (free call)"] = await _paired(r, m, CREATE, create_claimed, floor)
    out["report (succeed)"] = await _paired(r, m, REPORT, report, floor)
    for i in range(m):
        await fill(i)
    out["cancel"] = await _paired(r, m, CANCEL, cancel, floor)
    await r.flushdb()
    await r.aclose()
    return out


def print_costs(costs: dict[str, tuple[float, float]]) -> None:
    base = costs["noop"][0]
    print("\n(c) server time per call, one connection, each call beside one of the floor's")
    print("    (SLOWLOG, the median call)")
    print(f"  {'script':<28}{'us':>8}{'floor us':>10}{'vs floor':>10}{'vs noop':>9}")
    for name, (us, floor) in costs.items():
        print(f"  {name:<28}{us:>8.1f}{floor:>10.1f}{us / floor:>9.2f}x{us / base:>8.1f}x")
