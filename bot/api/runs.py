"""`/v1/runs`: start an agent run on the workers, read it, stop it, steer it, and
finish a run no worker drives.

Steering also works for runs this server did not start (an outside agent
gating its own tools under its own run id, known from the requests it made): a
run we know to be finished refuses corrections, and a run id nobody used is 404.
The caller is the API token's identity; a body may not claim another. A run is
its owner's (bot/api/ownership.py): any other identity gets the 404 of an
unknown id, except that the API operators may read and stop it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request, Response

from bot.api import messages as msg
from bot.api.auth import caller
from bot.api.errors import documented
from bot.api.ownership import Ownership
from bot.api.schemas import FinishIn, RunIn, RunOut, RunPath, SteerIn
from bot.core.models import RUN_FINAL, Run, RunState, Steering
from bot.core.proposal import check_channel, review_channels
from bot.core.states import State
from bot.errors import HitlError, InvalidTransition, NotFound
from bot.gate.corrections import correct, stop_run
from bot.gate.guarded import consumed
from bot.gate.runtime import Runtime
from bot.store.run.runs import RunStore


def router(rt: Runtime, owners: Ownership, runs: RunStore) -> APIRouter:
    r = APIRouter(prefix="/runs", tags=["runs"])

    async def known(run_id: str, identity: str) -> RunOut:
        await owners.run(run_id, identity, operators=True)
        try:
            return RunOut.of(await runs.get(run_id))
        except NotFound:
            raise NotFound(msg.UNKNOWN_RUN.format(id=run_id)) from None

    @r.post(
        "",
        status_code=201,
        response_model=RunOut,
        summary="Start an agent run; the workers pick it up",
        responses=documented(403, 422),
    )
    async def start(body: RunIn, request: Request) -> RunOut:
        identity = caller(request, body.requester)
        # A run's thread, its questions and its links go where the policy has reviewers.
        check_channel(body.channel, review_channels(rt.policy, rt.clock()), "runs")
        run = await runs.start(
            agent=body.agent,
            prompt=body.prompt,
            # the person the run is for counts as its requester: they may not approve
            requester=body.on_behalf_of or identity,
            channel=body.channel,
            owner=identity,
        )
        return RunOut.of(run)

    @r.get("/{run_id}", response_model=RunOut, responses=documented(404, 422))
    async def get(run_id: RunPath, request: Request) -> RunOut:
        return await known(run_id, caller(request))

    @r.post(
        "/{run_id}/stop",
        response_model=RunOut,
        summary="Hard stop: flag the run and withdraw what it waits on",
        responses=documented(403, 404, 422),
    )
    async def stop(run_id: RunPath, request: Request) -> RunOut:
        actor = caller(request)
        await known(run_id, actor)
        run = await stop_run(runs, rt.requests, rt.questions, rt.steering, run_id, actor=actor)
        return RunOut.of(run)

    _finish_route(r, rt, owners, runs, known)

    @r.post(
        "/{run_id}/steer",
        status_code=201,
        response_model=Steering,
        summary="Queue a correction for the run's next tool call",
        responses=documented(403, 404, 409, 422),
    )
    async def steer(run_id: RunPath, body: SteerIn, request: Request) -> Steering:
        actor = caller(request, body.requester)
        # An outside agent's run is known by the requests it made; an id nobody used
        # is a 404 that writes nothing (no queue for a typo to fill).
        await owners.run(run_id, actor, operators=False)
        try:
            run = await runs.get(run_id)
        except NotFound:
            pass
        else:
            if run.state in RUN_FINAL:
                raise InvalidTransition(
                    msg.RUN_FINISHED.format(run_id=run_id, state=run.state.value),
                    state=run.state.value,
                    event="steer",
                )
        return await correct(rt.steering, rt.requests, runs, run_id, body.text, actor=actor)

    @r.get(
        "/{run_id}/steering",
        response_model=Steering,
        summary="Pop the oldest queued correction; 204 when none is queued",
        responses={204: {"description": "Nothing queued"}, **documented(404, 422)},
    )
    async def pop(run_id: RunPath, request: Request) -> Steering | Response:
        # Reading a run's corrections is using its id: an agent may ask before it files
        # anything, and another identity's corrections are never handed out.
        await owners.use_run(run_id, caller(request))
        got = await rt.steering.pop(run_id)
        if got is None:
            return Response(status_code=204)
        await consumed(rt.steering, rt.run_audit, run_id, got, tool="")
        return got

    return r


async def _finishable(rt: Runtime, run: Run) -> None:
    """Only a run no worker drives ends this way (an outside agent's, or one started
    with POST /v1/runs that no worker took), and only once none of its calls waits
    for a person: a finished run must not leave a live card behind."""
    state = run.state.value
    if run.state in RUN_FINAL:
        why = msg.RUN_ALREADY_OVER.format(run_id=run.id, state=state)
        raise InvalidTransition(why, state=state, event="finish")
    if not run.outside and run.state != RunState.QUEUED:
        why = msg.RUN_HAS_A_WORKER.format(run_id=run.id, state=state)
        raise InvalidTransition(why, state=state, event="finish")
    open_ids = []
    for rid in await rt.steering.waiting(run.id):
        try:
            if (await rt.requests.get(rid)).state == State.PENDING_REVIEW:
                open_ids.append(rid)
        except HitlError:  # gone or unreadable: nothing left to decide
            continue
    if open_ids:
        why = msg.RUN_STILL_WAITS.format(run_id=run.id, ids=", ".join(sorted(open_ids)))
        raise InvalidTransition(why, state=state, event="finish")


def _ending(body: FinishIn) -> dict[str, object]:
    if body.ok:
        return {"state": RunState.FINISHED, "result": body.detail}
    return {"state": RunState.FAILED, "error": body.detail}


def _finish_route(
    r: APIRouter,
    rt: Runtime,
    owners: Ownership,
    runs: RunStore,
    known: Callable[[str, str], Awaitable[RunOut]],
) -> None:
    @r.post(
        "/{run_id}/finish",
        response_model=RunOut,
        summary="End a run your own agent drove: finished, or failed",
        responses=documented(404, 409, 422),
    )
    async def finish(run_id: RunPath, request: Request, body: FinishIn | None = None) -> RunOut:
        # The agent's own word that it is done: its owner's alone, as its calls are.
        actor = caller(request)
        await owners.run(run_id, actor, operators=False)
        await _finishable(rt, await known(run_id, actor))
        return RunOut.of(await runs.update(run_id, **_ending(body or FinishIn())))
