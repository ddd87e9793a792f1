"""An outside agent's call, filed unless a person spoke first: the check a worker makes
before every tool call, made for the SDK (both modes) and the HTTP API.

A run's queued correction, or its stop, comes before the call: nothing is created, the
correction is handed out once (popped, written to the run's audit, announced so Slack
ticks it off), and the caller is told why (`SteeredFirst`). On one Redis the check is
part of CREATE's round trip; on a cluster, where a run's keys live in another slot, it
is a round trip of its own, first. A call without a run id is filed as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot import messages as msg
from bot.core.models import Steering
from bot.core.policy import Policy
from bot.core.states import State
from bot.store.creating import Created
from bot.store.requests import RequestStore
from bot.store.run.run_audit import RunAudit
from bot.store.run.steering import SteeringStore

RETRIES = 3  # guarded creates before looking first instead


@dataclass(frozen=True)
class SteeredFirst:
    """The call was not filed: a person's correction (`correction`), or the run's stop
    (`stopped`; a hard-stop correction is one too), came first."""

    correction: Steering | None
    stopped: bool
    run_id: str

    @property
    def says(self) -> str:
        """What the agent's model reads instead of the tool's result."""
        if self.correction is None:
            return msg.CALL_RUN_STOPPED
        template = msg.CALL_HARD_STOP if self.stopped else msg.CALL_STEERED
        return template.format(text=self.correction.text)


async def create_unless_steered(
    requests: RequestStore,
    steering: SteeringStore,
    run_audit: RunAudit,
    policy: Policy,
    *,
    run_id: str | None,
    **fields: Any,
) -> Created | SteeredFirst:
    """`RequestStore.create` for an outside agent's call; `fields` are its arguments."""
    if run_id is None:
        return await requests.create(policy, run_id=None, **fields)
    if requests.guards_steering:
        for _ in range(RETRIES):
            made = await requests.create(policy, run_id=run_id, unless_steered=run_id, **fields)
            if not made.steered:
                return made
            first = await _first(steering, run_audit, run_id, fields)
            if first is not None:
                return first
            # Another call of the run took the correction between the two steps.
    # A cluster (or the run's other calls took the corrections each time): look first.
    first = await _first(steering, run_audit, run_id, fields)
    if first is not None:
        return first
    made = await requests.create(policy, run_id=run_id, **fields)
    if made.created and made.request.state == State.PENDING_REVIEW:
        await steering.add_waiting(run_id, made.request.id)
    return made


async def _first(
    steering: SteeringStore, run_audit: RunAudit, run_id: str, fields: dict[str, Any]
) -> SteeredFirst | None:
    s, stop = await steering.pop_and_stop(run_id)
    if s is None:
        return SteeredFirst(None, True, run_id) if stop else None
    await consumed(steering, run_audit, run_id, s, tool=str(fields.get("tool") or ""))
    return SteeredFirst(s, stop or s.hard_stop, run_id)


async def consumed(
    steering: SteeringStore, run_audit: RunAudit, run_id: str, s: Steering, *, tool: str
) -> None:
    """Record that a call of an outside agent's run read the correction, as a worker's
    does (bot/agent/gate.py), and let Slack tick it off."""
    await run_audit.append(
        run_id,
        {
            "at": steering.clock(),
            "kind": "user_steering",
            "run_id": run_id,
            "call_id": None,
            "tool": tool or None,
            "steering_id": s.id,
            "actor": s.actor,
            "text": s.text,
            "hard_stop": s.hard_stop,
            "source": s.source,
        },
    )
    await steering.consumed(run_id, s)
