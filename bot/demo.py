"""`hitl-bot demo`: the approval lifecycle on the embedded Valkey, narrated in the terminal.

Everything goes through the real store, Lua scripts and sweeper; only the
people are scripted. (The Slack emulator and the agent worker join the demo
as they land.)
"""

from __future__ import annotations

import asyncio

from rich.console import Console

from bot.clock import wall_ms
from bot.core.models import ActionRequest, Decision
from bot.core.policy import parse_policy
from bot.core.states import Event, State
from bot.deadlines.sweeper import Sweeper
from bot.errors import AlreadyResolved, NotEligible
from bot.runtime import open_runtime
from bot.store import audit

DEMO_POLICY = parse_policy(
    {
        "tiers": {
            t: {
                "review_timeout": "2s",
                "reviewers": {"users": ["UKID"]},
                "escalation": [{"users": ["UPARENT"], "timeout": "2s"}],
            }
            for t in ("low", "medium", "high", "critical")
        },
        "tools": {
            "move_claw": {"tier": "low", "review": "none"},
            "drop_claw": {"tier": "medium"},
        },
    },
    source="demo policy",
)


async def run_demo(out: Console, *, agent: str = "claw") -> None:
    async with open_runtime(policy=DEMO_POLICY) as rt:
        before = len(await rt.requests.ids_between())
        out.print(
            f"[bold]hitl-bot demo[/bold]  store: {rt.server.url if rt.server else 'REDIS_URL'}"
            f"  ({before} requests from earlier runs are still here)"
        )
        stop = asyncio.Event()
        sweeper = Sweeper(rt.requests, rt.questions, clock=wall_ms)
        sweeping = asyncio.create_task(sweeper.run(stop, interval_s=0.1))

        def show(req: ActionRequest, note: str = "") -> None:
            out.print(f"  {req.tool}({req.args}) -> [bold]{req.state.value}[/bold] {note}")

        async def propose(tool: str, args: dict[str, object]) -> ActionRequest:
            made = await rt.requests.create(
                rt.policy, tool=tool, args=args, requester="claw-agent", run_id="demo"
            )
            return made.request

        out.print("\n1. A free, reversible move runs without asking a person:")
        req = await propose("move_claw", {"direction": "left", "cm": 12})
        show(req, "(policy: no review)")
        for ev in (Event.CLAIM, Event.SUCCEED):
            req = (await rt.requests.transition(req.id, Decision(event=ev))).request
        show(req)

        out.print("\n2. Dropping the claw spends the last coin, so it waits for the kid:")
        req = await propose("drop_claw", {"target": "bear"})
        show(req, f"(waiting for {', '.join(req.assignees.users)})")
        try:
            await rt.requests.transition(
                req.id,
                Decision(event=Event.APPROVE, actor="claw-agent", payload_hash=req.payload_hash),
            )
        except NotEligible as exc:
            out.print(f"  the agent tries to approve itself: refused ({exc})")
        req = (
            await rt.requests.transition(
                req.id, Decision(event=Event.APPROVE, actor="UKID", payload_hash=req.payload_hash)
            )
        ).request
        show(req, "by UKID")
        try:
            await rt.requests.transition(
                req.id,
                Decision(event=Event.APPROVE, actor="UPARENT", payload_hash=req.payload_hash),
            )
        except AlreadyResolved as exc:
            out.print(f"  a second click: {exc}")

        out.print("\n3. A rejection needs a reason code:")
        req = await propose("drop_claw", {"target": "penguin"})
        req = (
            await rt.requests.transition(
                req.id,
                Decision(
                    event=Event.REJECT,
                    actor="UKID",
                    payload_hash=req.payload_hash,
                    reason_code="wrong_target",
                    text="I wanted the bear",
                ),
            )
        ).request
        show(req, "(wrong_target)")

        out.print("\n4. Nobody answers: it escalates to the parent, then the default rejects:")
        req = await propose("drop_claw", {"target": "unicorn"})
        show(req, "(2 s to answer)")
        seen = State.PENDING_REVIEW, 0
        while req.state == State.PENDING_REVIEW:
            req = await rt.requests.wait(req.id, timeout_s=0.5)
            if (req.state, req.level) != seen:
                seen = req.state, req.level
                show(
                    req,
                    f"(now waiting for {', '.join(req.assignees.users)})"
                    if req.state == State.PENDING_REVIEW
                    else "",
                )

        stop.set()
        await sweeping
        findings = [f async for f in audit.verify_all(rt.requests)]
        total = len(await rt.requests.ids_between())
        verdict = "intact" if not findings else f"{len(findings)} broken"
        out.print(f"\nAudit: {total} requests, every transition hash-chained: {verdict}.")
        out.print("Try: hitl-bot pending | hitl-bot show <id> | hitl-bot audit export")
