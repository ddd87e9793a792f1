"""Every route to `approved` or `auto_approved`, walked twice: as serve drives it (sealed,
claimed, and clean to `audit verify`) and as a process with store access and no key
would (never reaches `executing` through a checked claim, and `audit verify` names it).

The faces (Slack buttons, thread replies, digests, dialogs, the API, MCP and the Claude
Code hook) reach these routes through the request store; the last two tests keep that
true: a new event that approves without a seal, or a new script or module that approves
outside the routes walked here, fails them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.grants import Grant, bounds_of, reason_of
from bot.core.machine import apply
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy, parse_policy
from bot.core.proof.seal import unsealed
from bot.core.proposal import propose
from bot.core.states import Event, State
from bot.deadlines.sweeper import Sweeper
from bot.errors import ConfigError, ForgedDecision, HitlError
from bot.gate.claims import ClaimCheck, claim_checked
from bot.gate.grant_audit import grant_findings
from bot.gate.grant_pass import pass_if_granted
from bot.store import audit
from bot.store.grants import GrantStore
from bot.store.requests import SEALED, RequestStore
from bot.store.run.questions import QuestionStore
from tests.conftest import QUORUM_POLICY
from tests.store.test_grants import _forge
from tests.support.keys import serve_signer

ROOT = Path(__file__).resolve().parents[2]
HOUR = 3_600_000


def _policy(*, exempt_refund: bool = False) -> Policy:
    data: dict[str, Any] = copy.deepcopy(QUORUM_POLICY)
    data["tiers"]["medium"]["standing"] = {"max": "1h", "scope": "requester"}
    data["tiers"]["low"]["on_exhausted"] = "auto_approved"
    data["tiers"]["low"]["escalation"] = []
    data["tools"]["note"] = {"tier": "low"}
    if exempt_refund:  # a policy only the forger holds
        data["tools"]["refund"] = {"tier": "medium", "review": "none"}
    return parse_policy(data)


POLICY = _policy()


@dataclass
class Side:
    """One side of the walk: serve (with its key) or a keyless store writer."""

    requests: RequestStore
    grants: GrantStore
    clock: FakeClock
    redis: Redis
    notifier: tuple[RequestStore, GrantStore]  # serve's, which passes what it finds filed

    @property
    def serve(self) -> bool:
        return self.requests.signer is not None


async def _make(s: Side, tool: str = "refund", args: dict[str, Any] | None = None) -> ActionRequest:
    made = await s.requests.create(
        POLICY, tool=tool, args=args or {"amount": 5, "to": "c1"}, requester="agent", run_id="r1"
    )
    return made.request


async def _approve(s: Side, req: ActionRequest, actor: str = "UAPPROVER", **kw: Any) -> str:
    d = Decision(event=Event.APPROVE, actor=actor, payload_hash=req.payload_hash, **kw)
    await s.requests.transition(req.id, d)
    return req.id


async def click(s: Side) -> str:
    return await _approve(s, await _make(s))


async def thread_reply(s: Side) -> str:
    return await _approve(s, await _make(s), via="thread_reply:C1:1700000000.000100")


async def digest(s: Side) -> str:
    req = await _make(s)
    d = Decision(
        event=Event.APPROVE, actor="UAPPROVER", payload_hash=req.payload_hash, via="digest:g1"
    )
    await s.requests.transition(req.id, d, expect_version=req.version)
    return req.id


async def edit(s: Side) -> str:
    req = await _make(s)
    d = Decision(
        event=Event.EDIT_AND_APPROVE,
        actor="UAPPROVER",
        payload_hash=req.payload_hash,
        new_args={"amount": 4, "to": "c1"},
    )
    await s.requests.transition(req.id, d)
    return req.id


async def proposal(s: Side) -> str:
    made = await s.requests.create(
        POLICY,
        tool="refund",
        args={},
        requester="agent",
        candidates=[{"amount": 5, "to": "c1"}, {"amount": 6, "to": "c2"}],
    )
    req = made.request
    d = Decision(
        event=Event.EDIT_AND_APPROVE,
        actor="UAPPROVER",
        payload_hash=req.payload_hash,
        new_args=req.candidates[1],
    )
    await s.requests.transition(req.id, d)
    return req.id


async def quorum(s: Side) -> str:
    req = await _make(s, "deploy", {"v": 1})
    await _approve(s, req, "U1")
    return await _approve(s, req, "U2")


async def grant(s: Side) -> str:
    source = await _make(s, args={"amount": 50, "to": "c1"})
    await _approve(s, source)
    g = Grant(
        id=s.grants.new_id(),
        tool="refund",
        risk=source.risk,
        scope="requester",
        requester="agent",
        owner=source.owner,
        bounds=bounds_of(source.args),
        uses=5,
        granted_by="UAPPROVER",
        created_at=s.clock(),
        expires_at=s.clock() + HOUR,
        source=source.id,
    )
    later = await _make(s)
    try:
        await s.grants.make(g)
    except ConfigError:  # no key: the forger writes the grant by hand, and serve's notifier
        await _forge(s.redis, g)  # sees the call filed; failing that, the forger approves
        passed = await pass_if_granted(*s.notifier, POLICY, later)
        if passed.state == State.APPROVED:
            return later.id
        return await _approve(s, later, reason_code=reason_of(g.id), via=reason_of(g.id))
    await pass_if_granted(s.requests, s.grants, POLICY, later)
    return later.id


async def policy_default(s: Side) -> str:
    if s.serve:  # the executor's own policy exempts move_claw: sealed at create
        made = await s.requests.create(POLICY, tool="move_claw", args={}, requester="agent")
    else:  # the forger's policy exempts a refund the executor's policy gates
        forger = _policy(exempt_refund=True)
        made = await s.requests.create(forger, tool="refund", args={"amount": 5}, requester="a")
    return made.request.id


async def timeout(s: Side) -> str:
    req = await _make(s, "note", {"text": "hi"})
    s.clock.advance(11 * 60_000)
    await Sweeper(s.requests, QuestionStore(s.redis, clock=s.clock), clock=s.clock).sweep_once()
    if not s.serve and (await s.requests.get(req.id)).state == State.PENDING_REVIEW:
        # The keyless sweeper leaves the auto-approval to serve: the forger's only way is
        # the transition itself, which writes it unsealed.
        await s.requests.transition(req.id, Decision(event=Event.TIMEOUT, fence=req.version))
    return req.id


ROUTES: dict[str, Callable[[Side], Awaitable[str]]] = {
    "click": click,
    "thread_reply": thread_reply,
    "digest": digest,
    "edit": edit,
    "proposal": proposal,
    "quorum": quorum,
    "grant": grant,
    "policy_default": policy_default,
    "timeout": timeout,
}


def _side(redis: Redis, clock: FakeClock, ids: Callable[[], str], *, serve: bool) -> Side:
    signer = serve_signer() if serve else None
    notifier = (
        RequestStore(redis, clock=clock, ids=ids, signer=serve_signer()),
        GrantStore(redis, clock=clock, signer=serve_signer()),
    )
    return Side(
        RequestStore(redis, clock=clock, ids=ids, signer=signer),
        GrantStore(redis, clock=clock, signer=signer),
        clock,
        redis,
        notifier,
    )


CHECK = ClaimCheck(serve_signer().public(), POLICY)


async def _verify_findings(s: Side, rid: str) -> list[str]:
    verify = serve_signer().public().verify
    lines = await audit.lines(s.redis, rid)
    found = [why for _, why in unsealed(rid, lines, verify)]
    found += [
        f.why async for f in grant_findings(s.requests, s.grants, verify) if f.request_id == rid
    ]
    return found


@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_serve_drives_each_route_to_a_claim_audit_verify_accepts(
    route: str, redis: Redis, clock: FakeClock, ids: Callable[[], str]
) -> None:
    s = _side(redis, clock, ids, serve=True)
    rid = await ROUTES[route](s)
    req = await s.requests.get(rid)
    assert req.state in (State.APPROVED, State.AUTO_APPROVED), (route, req.state)
    claimed = await claim_checked(s.requests, rid, check=CHECK)
    assert claimed.state == State.EXECUTING
    assert await _verify_findings(s, rid) == []


@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_a_keyless_writer_on_each_route_never_reaches_executing(
    route: str, redis: Redis, clock: FakeClock, ids: Callable[[], str]
) -> None:
    s = _side(redis, clock, ids, serve=False)
    rid = await ROUTES[route](s)
    req = await s.requests.get(rid)
    if req.state in (State.APPROVED, State.AUTO_APPROVED):
        with pytest.raises(ForgedDecision):
            await claim_checked(s.requests, rid, check=CHECK)
        found = await _verify_findings(s, rid)
        exempted = route == "policy_default"  # judged by the executor's policy, not a seal
        assert found or exempted, f"{route}: audit verify names nothing"
    got = await s.requests.get(rid)
    assert got.state not in (State.EXECUTING, State.COMPLETED), route


def test_every_event_that_approves_is_sealed_by_serve() -> None:
    """A new event the machine lets approve must be sealed at the store's one seam."""
    req = _pending()
    for event in Event:
        d = Decision(event=event, actor="UAPPROVER", payload_hash=req.payload_hash)
        try:
            step = apply(req, d, req.expires_at + 1 if event == Event.TIMEOUT else 1)
        except (HitlError, ValueError):
            continue
        if step.request.state in (State.APPROVED, State.AUTO_APPROVED):
            assert event in SEALED, f"{event} approves, but the store does not seal it"


def _pending() -> ActionRequest:
    req, _ = propose(POLICY, request_id="q1", tool="note", args={}, requester="a", now=0)
    return req


# Where the code may construct an approving decision, by route; and the scripts that may
# write an approving state. Adding one means adding its route to ROUTES above.
APPROVING_MODULES = {
    "bot/slack/listeners/approvals.py": ("click", "edit"),
    "bot/slack/listeners/choose.py": ("proposal",),
    "bot/slack/batch/listeners.py": ("digest",),
    "bot/slack/grants/handlers.py": ("click",),
    "bot/slack/listeners/replies.py": ("thread_reply",),
    "bot/gate/grant_pass.py": ("grant",),
    "bot/store/transition_argv.py": ("policy_default",),
}
# create.lua writes the state its ARGV names: the policy exemption, sealed in
# transition_argv.exempted (the policy_default route).
APPROVING_SCRIPTS = {"decide.lua", "timeout.lua"}
_MOVES = re.compile(r"move\(t, [^)]*, (S\.approved|S\.auto_approved|default)\)")
_APPROVING = re.compile(r"Event\.(APPROVE|EDIT_AND_APPROVE)\b|\bapprove_words\b|APPROVE_EVENTS")


def test_no_module_or_script_approves_outside_the_routes_walked() -> None:
    found = set()
    for path in (ROOT / "bot").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("bot/core/") or rel.endswith("messages.py"):
            continue
        if rel in (
            "bot/store/requests.py",
            "bot/store/figures/history.py",
            "bot/slack/blocks/render.py",
        ):
            continue  # the seam itself, a read-only report, and the card's words
        if "Decision(" in path.read_text() and _APPROVING.search(path.read_text()):
            found.add(rel)
    missing = found - set(APPROVING_MODULES)
    assert not missing, f"approving decisions outside the walked routes: {sorted(missing)}"
    for routes in APPROVING_MODULES.values():
        assert set(routes) <= set(ROUTES)
    scripts = {
        p.name for p in (ROOT / "bot/store/scripts").glob("*.lua") if _MOVES.search(p.read_text())
    }
    assert scripts <= APPROVING_SCRIPTS, f"scripts that approve outside the walk: {scripts}"
