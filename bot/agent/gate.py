"""The tool boundary: the three checks every tool call passes, in this order.

1. Steering: a correction queued for the run cancels this call; the model reads it.
2. Approval: the policy's verdict; a gated call waits (push, to its deadline) for a person.
3. Execution: claimed exactly once, run with an idempotency key, reported; a failure is
   compensated or handed to a person.

Every id is derived from (run id, tool call id), so a run resumed on another
worker finds the request or question it made before instead of asking twice,
and the store's claim makes sure the tool runs at most once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import json
from typing import Any, cast

from bot.agent import messages as msg
from bot.agent.errors import InvalidArguments, LostClaim
from bot.agent.llm import ToolCall
from bot.agent.outcome import Outcome, explain, stopped
from bot.agent.tools import Tool, ToolRegistry
from bot.clock import Clock, wall_ms
from bot.core.models import (
    SYSTEM,
    ActionRequest,
    Decision,
    Question,
    QuestionState,
    RunState,
    Steering,
)
from bot.core.policy import Policy
from bot.core.proposal import exempt
from bot.core.states import Event, State
from bot.errors import Expired, HitlError, InvalidTransition, NotFound, PayloadError
from bot.store import keys
from bot.store.corrections import SUPERSEDED
from bot.store.events import publish
from bot.store.questions import QuestionStore
from bot.store.requests import RequestStore, id_for_key
from bot.store.runs import RUN_TTL_S, RunStore
from bot.store.steering import SteeringStore

DETAIL_MAX = 3000  # Decision.detail's limit
WAIT_SLACK_S = 0.25  # past a deadline, give the sweeper a moment before firing it ourselves


def idempotency_key(run_id: str, call_id: str) -> str:
    return f"{run_id}:{call_id}"


def request_id(run_id: str, call_id: str) -> str:
    return id_for_key(idempotency_key(run_id, call_id))


def question_id(run_id: str, call_id: str) -> str:
    return "q" + hashlib.sha256(idempotency_key(run_id, call_id).encode()).hexdigest()[:16]


def _clip(text: str, limit: int = DETAIL_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


STOP_POLL_S = 0.5  # how soon a hard stop reaches a tool that is already running


class _StoppedMidCall(Exception):
    """A person stopped the run while this tool was running; it was cancelled."""


class Gate:
    def __init__(
        self,
        *,
        requests: RequestStore,
        questions: QuestionStore,
        steering: SteeringStore,
        policy: Policy,
        runs: RunStore | None = None,
        clock: Clock = wall_ms,
        requester: str = "agent",
        on_behalf_of: str | None = None,
        channel: str | None = None,
        ask_timeout_ms: int = 30 * 60_000,
    ) -> None:
        self.requests = requests
        self.questions = questions
        self.steering = steering
        self.policy = policy
        self.runs = runs  # None: the caller is not a RunStore run (the SDK); nothing to track
        self.redis = requests.redis
        self.clock = clock
        self.requester = requester
        # the person who started the run: they count as requester, so they may not
        # approve what they asked the agent to do (separation of duties)
        self.on_behalf_of = on_behalf_of
        self.channel = channel
        self.ask_timeout_ms = ask_timeout_ms
        self._schemas: dict[int, tuple[Tool, dict[str, Any]]] = {}

    async def check(
        self, call: ToolCall, tools: ToolRegistry, *, run_id: str, resumed: bool = False
    ) -> Outcome:
        """Take one tool call through steering, approval and execution."""
        if resumed and (earlier := await self._resume(call, tools, run_id)) is not None:
            return earlier
        s, stop = await self.steering.pop_and_stop(run_id)
        if s is not None:
            await self._consumed(s, run_id, call)
            text = (msg.HARD_STOP if s.hard_stop else msg.STEERED).format(text=s.text)
            return Outcome(text, "steered", stop=s.hard_stop)
        t = tools.get(call.name)
        if t is None:
            names = ", ".join(tools.names())
            return Outcome(msg.UNKNOWN_TOOL.format(tool=call.name, names=names), "invalid")
        try:
            args = t.parse(call.arguments)
            if t.asks_person:
                return await self.ask(str(args["question"]), run_id=run_id, call_id=call.id)
            # A tool the policy exempts is created already claimed (one round trip), unless
            # the run was stopped: then it is created approved and withdrawn, as before.
            free = exempt(self.policy, t.name, args, t.risk)
            claim_as = SYSTEM if free and not (stop and self.runs is not None) else None
            made = await self.requests.create(
                self.policy,
                tool=t.name,
                args=args,
                requester=self.requester,
                on_behalf_of=self.on_behalf_of,
                run_id=run_id,
                # a run's cards go to its thread and the policy's channels: the run's own
                # channel is not a review route
                channel=None,
                idempotency_key=idempotency_key(run_id, call.id),
                risk=t.risk,
                # Recorded for the tool, so the Edit modal checks a person's edit against it.
                args_schema=self._schema(t),
                claim_as=claim_as,
            )
        except (InvalidArguments, PayloadError) as exc:
            return Outcome(msg.INVALID_ARGS.format(tool=call.name, problems=exc), "invalid")
        if made.claimed:
            return await self._run_shielded(made.request, t, run_id)
        return await self.settle(made.request, t, run_id)

    def _schema(self, t: Tool) -> dict[str, Any]:
        """The tool's schema, built once per tool: pydantic builds it anew on every call."""
        hit = self._schemas.get(id(t))
        if hit is None or hit[0] is not t:
            hit = self._schemas[id(t)] = (t, t.schema())
        return hit[1]

    async def _resume(self, call: ToolCall, tools: ToolRegistry, run_id: str) -> Outcome | None:
        """What this call already got before the run moved workers, if anything."""
        for raw in cast(list[str], await self.redis.lrange(keys.run_audit(run_id), 0, -1)):
            entry = json.loads(raw)
            if entry.get("kind") == "user_steering" and entry.get("call_id") == call.id:
                template = msg.HARD_STOP if entry.get("hard_stop") else msg.STEERED
                return Outcome(
                    template.format(text=entry["text"]),
                    "steered",
                    stop=bool(entry.get("hard_stop")),
                )
        try:
            req = await self.requests.get(request_id(run_id, call.id))
        except NotFound:
            pass
        else:
            return await self.settle(req, tools.get(req.tool), run_id, resumed=True)
        try:
            q = await self.questions.get(question_id(run_id, call.id))
        except NotFound:
            return None
        return await self._answer(q, run_id)

    # 1. Steering

    async def steer(self, run_id: str, call: ToolCall | None) -> Steering | None:
        """Take the oldest queued correction, if any, and record that this call consumed it.

        `call` is None when the model gave its final answer with a correction still
        queued: the person spoke, so the model reads it instead of it being dropped.
        """
        s = await self.steering.pop(run_id)
        if s is not None:
            await self._consumed(s, run_id, call)
        return s

    async def _consumed(self, s: Steering, run_id: str, call: ToolCall | None) -> None:
        """Record that this call (None: the final answer) consumed the correction."""
        entry = {
            "at": self.clock(),
            "kind": "user_steering",
            "run_id": run_id,
            "call_id": call.id if call else None,
            "tool": call.name if call else None,
            "steering_id": s.id,
            "actor": s.actor,
            "text": s.text,
            "hard_stop": s.hard_stop,
            "source": s.source,
        }
        await self.audit(run_id, entry)
        await publish(
            self.redis,
            run_id,
            {
                "kind": "steer",
                "id": s.id,
                "event": "consumed",
                "state": "consumed",
                "version": 0,
                "run_id": run_id,
                "source": s.source or "",
            },
        )

    async def audit(self, run_id: str, entry: dict[str, Any]) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.rpush(keys.run_audit(run_id), json.dumps(entry, ensure_ascii=False))
        pipe.expire(keys.run_audit(run_id), RUN_TTL_S)
        await pipe.execute()

    # 2. Approval

    async def settle(
        self, req: ActionRequest, tool: Tool | None, run_id: str, *, resumed: bool = False
    ) -> Outcome:
        """Wait for the decision on `req`, then run it or explain why it did not run."""
        req = await self.decide(req, run_id)
        if req.state in (State.APPROVED, State.AUTO_APPROVED):
            return await self._execute(req, tool, run_id)
        if req.state in (State.EXECUTING, State.ROLLBACK_PENDING):
            if not resumed:
                raise LostClaim(f"request {req.id} is {req.state.value} under another executor")
            return await self._orphaned(req)
        return await self._explain(req, run_id)

    async def decide(self, req: ActionRequest, run_id: str) -> ActionRequest:
        """Block until `req` leaves review: approved, edited, rejected, timed out or cancelled.

        It may escalate and stay in review with a new deadline, so this loops; past
        a deadline it fires the timeout itself (fenced, so a sweeper firing it too is
        harmless), so a worker without a sweeper still ends every wait.
        """
        if req.state != State.PENDING_REVIEW:
            return req
        await self._waiting(run_id, req.id)
        if await self._stopped(run_id):
            # The stop came before waiting_on named this request, so it could not cancel it.
            await self._cancel(req, "run_stopped")
            req = await self.requests.get(req.id)
        while req.state == State.PENDING_REVIEW:
            left_ms = (req.expires_at or 0) - self.clock()
            if left_ms <= 0:
                with contextlib.suppress(HitlError):
                    await self.requests.transition(
                        req.id, Decision(event=Event.TIMEOUT, fence=req.version)
                    )
            req = await self.requests.wait(req.id, max(0, left_ms) / 1000 + WAIT_SLACK_S)
        await self._running(run_id)
        return req

    async def _waiting(self, run_id: str, item_id: str) -> None:
        if self.runs is not None:
            await self.runs.update(run_id, state=RunState.WAITING, waiting_on=item_id)

    async def _running(self, run_id: str) -> None:
        if self.runs is not None:
            await self.runs.update(run_id, state=RunState.RUNNING, waiting_on=None)

    async def _stopped(self, run_id: str) -> bool:
        return self.runs is not None and (await self.runs.get(run_id)).stop_requested

    async def _explain(self, req: ActionRequest, run_id: str) -> Outcome:
        res = req.resolution
        if res is not None and res.event == Event.CANCEL and res.reason_code == SUPERSEDED:
            # A person's correction withdrew this call: the model reads it now.
            s = await self.steer(run_id, None)
            if s is not None:
                text = (msg.HARD_STOP if s.hard_stop else msg.STEERED).format(text=s.text)
                return Outcome(text, "steered", req.id, stop=s.hard_stop)
        out = explain(req)
        if out.status in ("withdrawn", "lapsed") and await self._stopped(run_id):
            return stopped(req.id)  # stop_run keeps an earlier resolution; the flag tells
        return out

    # 3. Execution

    async def _execute(self, req: ActionRequest, tool: Tool | None, run_id: str) -> Outcome:
        if tool is None:  # the agent lost the tool between proposing and running it
            await self._cancel(req, "unknown_tool")
            return Outcome(msg.UNKNOWN_TOOL.format(tool=req.tool, names="-"), "invalid", req.id)
        try:
            tool.validate(req.args)  # an edit came from a person: check it like model output
        except InvalidArguments as exc:
            # The modal checks edits against the recorded schema; this catches a schema
            # that was stale or missing. The audit and the model both get the reason.
            await self._cancel(req, msg.BAD_EDIT_CODE, text=_clip(str(exc), 500))
            text = msg.BAD_EDIT.format(tool=tool.name, problems=exc)
            return Outcome(text, "cancelled", req.id)
        if await self._stopped(run_id):
            await self._cancel(req, "run_stopped")
            return stopped(req.id)
        try:
            claimed = (await self.requests.transition(req.id, Decision(event=Event.CLAIM))).request
        except Expired:
            await self._cancel(req, "claim_expired")
            return Outcome(msg.CLAIM_EXPIRED, "cancelled", req.id)
        except InvalidTransition:
            now = await self.requests.get(req.id)
            if now.state in (State.CANCELLED, State.AUTO_REJECTED):
                return await self._explain(now, run_id)
            raise LostClaim(f"request {req.id} was claimed by another executor") from None
        return await self._run_shielded(claimed, tool, run_id)

    async def _run_shielded(self, claimed: ActionRequest, tool: Tool, run_id: str) -> Outcome:
        # Claimed: from here the tool runs and reports even if this task is cancelled
        # (a graceful shutdown), so the request never stays `executing` for nothing.
        work = asyncio.ensure_future(self._run_claimed(claimed, tool, run_id))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await work
            raise

    async def _run_claimed(self, req: ActionRequest, tool: Tool, run_id: str) -> Outcome:
        try:
            output = await self._call_stoppable(req, tool, run_id)
        except _StoppedMidCall:
            return await self._failed(req, tool, run_id, msg.STOPPED_MID_CALL)
        except Exception as exc:  # any failure of the tool is reported, never lost
            return await self._failed(req, tool, run_id, f"{type(exc).__name__}: {exc}")
        try:
            await self.requests.advance(req.id, Decision(event=Event.SUCCEED, detail=_clip(output)))
        except InvalidTransition:
            # The execution deadline fired first; a person now checks it by hand.
            return explain(await self.requests.get(req.id))
        res = req.resolution
        if res is None or res.reason_code == "no_review" or res.event == Event.TIMEOUT:
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
        call = asyncio.ensure_future(tool.call(req.args, idempotency_key=req.id, run_id=run_id))
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
            return await self._compensate(req, tool, run_id, _clip(error, 500))
        except InvalidTransition:
            # A deadline fired first (the call or its undo ran too long): the request
            # already went to a person; say where it stands.
            return explain(await self.requests.get(req.id))

    async def _compensate(self, req: ActionRequest, tool: Tool, run_id: str, error: str) -> Outcome:
        compensate = tool.compensate is not None
        fail = Decision(event=Event.FAIL, detail=error, has_compensation=compensate)
        await self.requests.transition(req.id, fail)
        if not compensate:
            return Outcome(msg.FAILED_MANUAL.format(error=error), "manual_intervention", req.id)
        try:
            await tool.undo(req.args, idempotency_key=req.id, run_id=run_id)
        except Exception as exc:  # the compensation failing is exactly when a person must look
            detail = _clip(f"{error}; compensation failed: {type(exc).__name__}: {exc}")
            await self.requests.transition(
                req.id, Decision(event=Event.ROLLBACK_FAILED, detail=detail)
            )
            return Outcome(msg.FAILED_MANUAL.format(error=error), "manual_intervention", req.id)
        await self.requests.transition(
            req.id, Decision(event=Event.ROLLBACK_OK, detail=_clip(f"{error}; compensated"))
        )
        return Outcome(msg.FAILED_ROLLED_BACK.format(error=error), "rolled_back", req.id)

    async def _orphaned(self, req: ActionRequest) -> Outcome:
        """A call whose worker died mid-tool: never run it again; a person reconciles it."""
        ev = Event.FAIL if req.state == State.EXECUTING else Event.ROLLBACK_FAILED
        with contextlib.suppress(InvalidTransition):
            await self.requests.transition(req.id, Decision(event=ev, detail=msg.DEAD_WORKER))
        now = await self.requests.get(req.id)
        if now.state == State.MANUAL_INTERVENTION and now.detail == msg.DEAD_WORKER:
            text = msg.OUTCOME_UNKNOWN.format(tool=req.tool)
            return Outcome(text, "manual_intervention", req.id)
        return explain(now)

    async def _cancel(self, req: ActionRequest, reason: str, *, text: str | None = None) -> None:
        cancel = Decision(event=Event.CANCEL, reason_code=reason, text=text)
        with contextlib.suppress(InvalidTransition):
            await self.requests.transition(req.id, cancel)

    # ask_human

    async def ask(self, question: str, *, run_id: str, call_id: str) -> Outcome:
        """Put the question to a person and wait for the answer, its expiry or a stop."""
        qid = question_id(run_id, call_id)
        try:
            q = await self.questions.get(qid)
        except NotFound:
            # ask() takes no id; a store whose id factory yields the derived id gives the
            # same effect, and the existence check above keeps it from asking twice.
            fixed = QuestionStore(self.redis, clock=self.clock, ids=lambda: qid[1:])
            q = await fixed.ask(
                question, timeout_ms=self.ask_timeout_ms, run_id=run_id, channel=self.channel
            )
        return await self._answer(q, run_id)

    async def _answer(self, q: Question, run_id: str) -> Outcome:
        if q.state == QuestionState.OPEN:
            await self._waiting(run_id, q.id)
            if await self._stopped(run_id):
                q = await self.questions.cancel(q.id)  # see decide()
            while q.state == QuestionState.OPEN:
                left_ms = q.expires_at - self.clock()
                if left_ms <= 0:
                    with contextlib.suppress(HitlError):
                        await self.questions.timeout(q.id, fence=q.version)
                q = await self.questions.wait(q.id, max(0, left_ms) / 1000 + WAIT_SLACK_S)
            await self._running(run_id)
        if q.state == QuestionState.ANSWERED:
            await publish(
                self.redis,
                q.id,
                {
                    "kind": "question",
                    "id": q.id,
                    "event": "delivered",
                    "state": "answered",
                    "version": 0,
                },
            )
            text = msg.ANSWERED.format(actor=q.answered_by or "The person", answer=q.answer or "")
            return Outcome(text, "answered")
        if q.state == QuestionState.CANCELLED:
            return Outcome(msg.QUESTION_CANCELLED, "stopped", stop=True)
        return Outcome(msg.NO_ANSWER, "no_answer")
