"""Step 3 of the tool boundary: run an approved call exactly once and report it.

Claimed exactly once, run with the request id as its idempotency key and the claim's
fence (bot/core/proof/fence.py), reported with that fence; a failure is compensated or handed
to a person; a hard stop cancels a running coroutine tool. A mixin of
`bot.agent.gate.ToolGate`, which decides what reaches here.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json

from bot.agent import messages as msg
from bot.agent.errors import InvalidArguments, LostClaim
from bot.agent.outcome import Outcome, explain, stopped
from bot.agent.tools import Tool
from bot.core.models import SYSTEM, ActionRequest, clip
from bot.core.proof.fence import claim_retried
from bot.core.states import Event, State, SystemReason
from bot.errors import Expired, ForgedDecision, InvalidTransition
from bot.gate.claims import ClaimCheck, claim_checked
from bot.gate.execution import fail_claimed, orphan, report_executed, report_rollback, withdraw
from bot.store.free_call import SentCreate
from bot.store.requests import RequestStore
from bot.store.run.run_signals import RunSignals
from bot.store.run.runs import RunStore

STOP_POLL_S = 0.5  # how soon a hard stop reaches a tool that is already running


class _StoppedMidCall(Exception):
    """A person stopped the run while this tool was running; it was cancelled."""


class Running:
    requests: RequestStore
    claims: ClaimCheck
    runs: RunStore | None  # None: the caller is not a RunStore run; nothing can stop it
    signals: RunSignals | None  # the runs' corrections and stops known locally

    async def _explain(self, req: ActionRequest, run_id: str) -> Outcome:
        """Why `req` did not run, in the model's words (the gate's approval step)."""
        raise NotImplementedError

    async def _stopped(self, run_id: str) -> bool:
        return self.runs is not None and (await self.runs.get(run_id)).stop_requested

    async def _execute(self, req: ActionRequest, tool: Tool | None, run_id: str) -> Outcome:
        if tool is None:  # the agent lost the tool between proposing and running it
            await self._cancel(req, SystemReason.UNKNOWN_TOOL)
            return Outcome(msg.UNKNOWN_TOOL.format(tool=req.tool, names="-"), "invalid", req.id)
        try:
            tool.validate(req.args)  # an edit came from a person: check it like model output
        except InvalidArguments as exc:
            # The modal checks edits against the recorded schema; this catches a schema
            # that was stale or missing. The audit and the model both get the reason.
            await self._cancel(req, msg.BAD_EDIT_CODE, text=clip(str(exc), 500))
            text = msg.BAD_EDIT.format(tool=tool.name, problems=exc)
            return Outcome(text, "cancelled", req.id)
        if await self._stopped(run_id):
            await self._cancel(req, SystemReason.RUN_STOPPED)
            return stopped(req.id)
        try:
            claimed = await self._claim(req.id)
        except ForgedDecision as exc:  # audited and logged by the check: the model is told
            return Outcome(str(exc), "forged_decision", req.id)
        except Expired:
            await self._cancel(req, SystemReason.CLAIM_EXPIRED)
            return Outcome(msg.CLAIM_EXPIRED, "cancelled", req.id)
        except InvalidTransition:
            now = await self.requests.get(req.id)
            if now.state in (State.CANCELLED, State.AUTO_REJECTED):
                return await self._explain(now, run_id)
            raise LostClaim(f"request {req.id} was claimed by another executor") from None
        return await self._run_shielded(claimed, tool, run_id)

    async def _claim(self, rid: str) -> ActionRequest:
        """The checked claim, sent again with its token while the store does not confirm
        it (NotReplicated): the same claim comes back, never a second one. Unconfirmed
        after the last try, it raises and the tool does not run."""
        return await claim_retried(
            lambda token: claim_checked(self.requests, rid, check=self.claims, token=token)
        )

    async def _run_shielded(
        self, claimed: ActionRequest, tool: Tool, run_id: str, *, sent: SentCreate | None = None
    ) -> Outcome:
        # Claimed: from here the tool runs and reports even if this task is cancelled
        # (a graceful shutdown), so the request never stays `executing` for nothing.
        work = asyncio.ensure_future(self._run_claimed(claimed, tool, run_id, sent))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await work
            raise

    async def _run_claimed(
        self, req: ActionRequest, tool: Tool, run_id: str, sent: SentCreate | None = None
    ) -> Outcome:
        """`sent`: the claim was sent, not waited on (bot/store/free_call.py); its reply
        is read before anything is reported, so nothing is reported unrecorded."""
        try:
            output = await self._call_stoppable(req, tool, run_id)
        except _StoppedMidCall:
            req = req if sent is None else await sent.confirmed()
            return await self._failed(req, tool, run_id, msg.STOPPED_MID_CALL)
        except Exception as exc:  # any failure of the tool is reported, never lost
            req = req if sent is None else await sent.confirmed()
            return await self._failed(req, tool, run_id, f"{type(exc).__name__}: {exc}")
        detail = clip(output)
        try:
            # a free call sent unconfirmed: its report rides behind the create
            # its read of the run's queue and stop flag tells the local follower whether
            # the next call may skip the store (bot/store/run/run_signals.py)
            took = sent is not None and await sent.succeeded(
                detail, run_id if self.runs is not None else None, signals=self.signals
            )
            if sent is not None:
                req = await sent.confirmed()
            if not took:
                await report_executed(
                    self.requests,
                    req.id,
                    ok=True,
                    detail=detail,
                    compensated=None,
                    actor=SYSTEM,
                    fence=req.fence,
                    check=self.claims,
                )
        except InvalidTransition:
            # The execution deadline fired first; a person now checks it by hand.
            return explain(await self.requests.get(req.id))
        res = req.resolution
        if res is None or res.reason_code == SystemReason.NO_REVIEW or res.event == Event.TIMEOUT:
            return Outcome(output, "completed", req.id)
        if req.original_hash:
            args = json.dumps(req.args, ensure_ascii=False)
            text = msg.EDITED.format(actor=res.actor, args=args, output=output)
        else:
            text = msg.APPROVED.format(actor=res.actor, output=output)
        return Outcome(text, "completed", req.id)

    async def _call_stoppable(self, req: ActionRequest, tool: Tool, run_id: str) -> str:
        """Run the tool; a hard stop cancels it if it is a coroutine.

        A sync tool runs in a thread that cannot be interrupted, so it is let
        finish and reported as usual; the run stops right after it.
        """
        call = asyncio.ensure_future(
            tool.call(req.args, idempotency_key=req.id, run_id=run_id, fence=req.fence)
        )
        if not inspect.iscoroutinefunction(tool.fn) or self.runs is None:
            return await call
        while True:
            done, _ = await asyncio.wait({call}, timeout=STOP_POLL_S)
            if done:
                return call.result()
            if await self._stopped(run_id):
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await call
                raise _StoppedMidCall

    async def _failed(self, req: ActionRequest, tool: Tool, run_id: str, error: str) -> Outcome:
        try:
            return await self._compensate(req, tool, run_id, clip(error, 500))
        except InvalidTransition:
            # A deadline fired first (the call or its undo ran too long): the request
            # already went to a person; say where it stands.
            return explain(await self.requests.get(req.id))

    async def _compensate(self, req: ActionRequest, tool: Tool, run_id: str, error: str) -> Outcome:
        compensate = tool.compensate is not None
        fence = req.fence
        await fail_claimed(self.requests, req.id, detail=error, compensate=compensate, fence=fence)
        if not compensate:
            return Outcome(msg.FAILED_MANUAL.format(error=error), "manual_intervention", req.id)
        try:
            await tool.undo(req.args, idempotency_key=req.id, run_id=run_id, fence=fence)
        except Exception as exc:  # the compensation failing is exactly when a person must look
            detail = clip(f"{error}; compensation failed: {type(exc).__name__}: {exc}")
            await report_rollback(self.requests, req.id, ok=False, detail=detail, fence=fence)
            return Outcome(msg.FAILED_MANUAL.format(error=error), "manual_intervention", req.id)
        detail = f"{error}; compensated"
        await report_rollback(self.requests, req.id, ok=True, detail=detail, fence=fence)
        return Outcome(msg.FAILED_ROLLED_BACK.format(error=error), "rolled_back", req.id)

    async def _orphaned(self, req: ActionRequest) -> Outcome:
        """A call whose worker died mid-tool: never run it again; a person reconciles it."""
        executing = req.state == State.EXECUTING
        with contextlib.suppress(InvalidTransition):
            await orphan(self.requests, req.id, executing=executing, detail=msg.DEAD_WORKER)
        now = await self.requests.get(req.id)
        if now.state == State.MANUAL_INTERVENTION and now.detail == msg.DEAD_WORKER:
            text = msg.OUTCOME_UNKNOWN.format(tool=req.tool)
            return Outcome(text, "manual_intervention", req.id)
        return explain(now)

    async def _cancel(self, req: ActionRequest, reason: str, *, text: str | None = None) -> None:
        with contextlib.suppress(InvalidTransition):
            await withdraw(self.requests, req.id, reason=reason, text=text)
