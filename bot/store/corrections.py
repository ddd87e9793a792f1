"""A person's correction to a run: queue it, and withdraw the call it contradicts.

A correction that arrives while the run waits on an approval must not leave that
card live: somebody could still approve the call the person just said was wrong.
So the pending request is withdrawn (reason code `superseded`, audited, its card
updated through the outbox) and the agent, woken by the withdrawal, reads the
correction instead, exactly as it would at its next tool call.
"""

from __future__ import annotations

import contextlib

from bot.core.ids import is_question_id
from bot.core.models import Steering
from bot.core.states import State, SystemReason
from bot.errors import HitlError
from bot.store import execution
from bot.store.requests import RequestStore
from bot.store.runs import RunStore
from bot.store.steering import SteeringStore

SUPERSEDED = SystemReason.SUPERSEDED.value  # the withdrawn call's reason code


async def correct(
    steering: SteeringStore,
    requests: RequestStore,
    runs: RunStore | None,
    run_id: str,
    text: str,
    *,
    actor: str,
    source: str | None = None,
) -> Steering:
    """Queue `text` for the run; if it waits on an approval, withdraw that request."""
    queued = await steering.push(run_id, text, actor=actor, source=source)
    if runs is None:
        return queued
    with contextlib.suppress(HitlError):  # not one of our runs, or nothing pending
        waiting = (await runs.get(run_id)).waiting_on or ""
        if waiting and not is_question_id(waiting):
            req = await requests.get(waiting)
            if req.state == State.PENDING_REVIEW:
                await execution.withdraw(requests, req.id, actor=actor, reason=SUPERSEDED)
    return queued
