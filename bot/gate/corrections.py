"""What a person says to a run: a correction (queue it, withdraw the calls it
contradicts), or the hard stop.

A correction that arrives while the run waits on an approval must not leave that
card live: somebody could still approve the call the person just said was wrong.
So each request the run waits on is withdrawn (reason code `superseded`, audited,
its card updated through the outbox) and the agent, woken by the withdrawal, reads
the correction instead, exactly as it would at its next tool call. That holds for a
worker's run (`Run.waiting_on`) and for an outside agent's (the run's waiting set,
which CREATE fills), whichever of them waits.
"""

from __future__ import annotations

import contextlib

from bot.core.ids import is_question_id
from bot.core.models import RUN_FINAL, Decision, QuestionState, Run, RunState, Steering
from bot.core.states import Event, State, SystemReason
from bot.errors import HitlError
from bot.gate import execution
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.run_signals import signal
from bot.store.run.runs import RunStore
from bot.store.run.steering import SteeringStore

SUPERSEDED = SystemReason.SUPERSEDED.value  # the withdrawn call's reason code
RUN_STOPPED = SystemReason.RUN_STOPPED.value


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
    """Queue `text` for the run; withdraw every request it waits on.

    NotReplicated: queued on the primary, but the replicas asked for did not confirm it
    in time, so a failover could still lose it. The cards are withdrawn first either
    way: a call the person contradicts must not stay open while they try again."""
    queued = await steering.push(run_id, text, actor=actor, source=source)
    await withdraw_waiting(steering, requests, runs, run_id, actor=actor, reason=SUPERSEDED)
    await steering.confirm_saved(run_id)
    return queued


async def withdraw_waiting(
    steering: SteeringStore,
    requests: RequestStore,
    runs: RunStore | None,
    run_id: str,
    *,
    actor: str,
    reason: str,
) -> list[str]:
    """Withdraw the run's requests still in review; the ids withdrawn. Those that left
    review are dropped from the waiting set on the way."""
    waiting = await steering.waiting(run_id)
    if runs is not None:
        with contextlib.suppress(HitlError):  # not a run with a record
            on = (await runs.get(run_id)).waiting_on or ""
            if on and not is_question_id(on) and on not in waiting:
                waiting.append(on)
    gone, done = [], []
    for rid in waiting:
        if is_question_id(rid):
            continue  # a correction leaves a question open: a stop withdraws it
        try:
            req = await requests.get(rid)
            if req.state == State.PENDING_REVIEW:
                await execution.withdraw(requests, rid, actor=actor, reason=reason)
                gone.append(rid)
        except HitlError:  # decided in the meantime, or expired: that stands
            pass
        done.append(rid)
    await steering.forget_waiting(run_id, done)
    return gone


async def stop_run(
    runs: RunStore,
    requests: RequestStore,
    questions: QuestionStore,
    steering: SteeringStore,
    run_id: str,
    *,
    actor: str,
) -> Run:
    """The hard stop: flag the run and withdraw whatever it waits on, waking its agent.

    A worker's run ends when its worker sees the flag; an outside agent's run has no
    worker to say so, so it is stopped at once (its next call is refused as stopped)."""
    run = await runs.update(run_id, stop_requested=True)
    await signal(runs.redis, run_id)  # workers that keep the run's state locally
    if run.waiting_on and is_question_id(run.waiting_on):
        with contextlib.suppress(HitlError):  # answered already: the flag does the rest
            await questions.cancel(run.waiting_on)
    elif run.waiting_on:
        with contextlib.suppress(HitlError):  # decided already: the flag does the rest
            await requests.transition(
                run.waiting_on, Decision(event=Event.CANCEL, actor=actor, reason_code=RUN_STOPPED)
            )
    await withdraw_waiting(steering, requests, None, run_id, actor=actor, reason=RUN_STOPPED)
    for qid in await steering.waiting(run_id):  # the questions filed under the run, any face
        if is_question_id(qid) and qid != run.waiting_on:
            with contextlib.suppress(HitlError):  # answered or expired already: that stands
                await questions.cancel(qid)
    if run.state == RunState.QUEUED or (run.outside and run.state not in RUN_FINAL):
        run = await runs.update(run_id, state=RunState.STOPPED)
    await runs.confirm_saved(run_id)  # told "stopped" only once a failover cannot undo it
    return run


async def open_question(steering: SteeringStore, questions: QuestionStore, run: Run) -> str | None:
    """The question a reply in the run's thread answers: the one its worker waits on,
    else the latest still open that any face filed under the run."""
    if run.waiting_on and is_question_id(run.waiting_on):
        return run.waiting_on
    latest: tuple[int, str] | None = None
    for qid in await steering.waiting(run.id):
        if not is_question_id(qid):
            continue
        with contextlib.suppress(HitlError):  # gone meanwhile: not waited on
            q = await questions.get(qid)
            if q.state == QuestionState.OPEN and (latest is None or q.asked_at >= latest[0]):
                latest = (q.asked_at, q.id)
    return latest[1] if latest else None
