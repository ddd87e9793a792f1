"""The tool boundary: the three checks every tool call passes, in this order.

1. Steering: a correction queued for the run cancels this call; the model reads it.
2. Approval: the policy's verdict; a gated call waits (push, to its deadline) for a person.
3. Execution (`bot.agent.running`): claimed exactly once, run with an idempotency key,
   reported; a failure is compensated or handed to a person.

Every id is derived from (run id, tool call id), so a run resumed on another
worker finds the request or question it made before instead of asking twice,
and the store's claim makes sure the tool runs at most once.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from bot.agent import messages as msg
from bot.agent.errors import InvalidArguments, LostClaim
from bot.agent.filing import Filing
from bot.agent.filing import idempotency_key as idempotency_key
from bot.agent.filing import request_id as request_id
from bot.agent.llm import ToolCall
from bot.agent.outcome import Outcome, explain, stopped
from bot.agent.running import Running
from bot.agent.tools import Tool, ToolRegistry, proposal_of
from bot.clock import Clock, wall_ms
from bot.core.choices import option_problem
from bot.core.ids import keyed_question_id
from bot.core.models import (
    WORKER,
    ActionRequest,
    Question,
    QuestionState,
    RunState,
    Steering,
)
from bot.core.policy import Policy
from bot.core.states import Event, State, SystemReason
from bot.errors import HitlError, NotFound, PayloadError
from bot.gate.claims import ClaimCheck
from bot.gate.corrections import SUPERSEDED
from bot.gate.decide import expire_overdue
from bot.signing import PublicKeys
from bot.store.creating import Created
from bot.store.free_call import SentCreate
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.run_audit import RunAudit
from bot.store.run.run_signals import signals_for
from bot.store.run.runs import RunStore
from bot.store.run.steering import SteeringStore

WAIT_SLACK_S = 0.25  # past a deadline, give the sweeper a moment before firing it ourselves


def question_id(run_id: str, call_id: str) -> str:
    return keyed_question_id(idempotency_key(run_id, call_id))


class ToolGate(Filing, Running):
    def __init__(
        self,
        *,
        requests: RequestStore,
        questions: QuestionStore,
        steering: SteeringStore,
        run_audit: RunAudit,
        policy: Policy,
        runs: RunStore | None = None,
        clock: Clock = wall_ms,
        requester: str = "agent",
        on_behalf_of: str | None = None,
        channel: str | None = None,
        ask_timeout_ms: int = 30 * 60_000,
        owner: str = WORKER,
        trusted: PublicKeys | None = None,
        reread: bool = False,  # `trusted` came from the environment (bot/gate/claims.py)
    ) -> None:
        self.requests = requests
        self.claims = ClaimCheck(trusted, policy, reread=reread)  # no keys: claims refused
        self.questions = questions
        self.steering = steering
        self.run_audit = run_audit
        self.policy = policy
        self.runs = runs  # None: the caller is not a RunStore run (the SDK); nothing to track
        self.clock = clock
        self.requester = requester
        # the person who started the run: they count as requester, so they may not
        # approve what they asked the agent to do (separation of duties)
        self.on_behalf_of = on_behalf_of
        self.channel = channel
        self.owner = owner  # the run's owner: what the gate files is that identity's work
        self.ask_timeout_ms = ask_timeout_ms
        self._schemas: dict[int, tuple[Tool, dict[str, Any]]] = {}
        # A run's corrections and stop known locally, so a free call waits on one round
        # trip; only for RunStore runs on one Redis (None: ask the store every time).
        self.signals = signals_for(requests.redis) if runs is not None else None
        self._filed: OrderedDict[str, None] = OrderedDict()  # request ids filed lately

    async def check(
        self, call: ToolCall, tools: ToolRegistry, *, run_id: str, resumed: bool = False
    ) -> Outcome:
        """Take one tool call through steering, approval and execution."""
        if resumed and (earlier := await self._resume(call, tools, run_id)) is not None:
            return earlier
        t = tools.get(call.name)
        # On one Redis the create itself refuses while a correction or a stop waits, a
        # round trip less per call; otherwise, and for a call that creates no request,
        # the queue is read first.
        guarded = self.requests.guards_steering and t is not None and not t.asks_person
        stop = False
        if not guarded:
            steered, stop = await self._steered(run_id, call)
            if steered is not None:
                return steered
        if t is None:
            names = ", ".join(tools.names())
            return Outcome(msg.UNKNOWN_TOOL.format(tool=call.name, names=names), "invalid")
        try:
            args = t.parse(call.arguments)
            if t.asks_person:
                options = [str(o) for o in args.get("options") or ()]
                if problem := option_problem(options):
                    raise InvalidArguments(problem)
                return await self.ask(
                    str(args["question"]), run_id=run_id, call_id=call.id, options=options
                )
            # a proposal: from here on a call of the tool proposed, with no args yet
            t, args, cands = proposal_of(t, args, tools)
            made = await self._first(t, args, call, run_id, stop=stop, guarded=guarded, cands=cands)
            if isinstance(made, Created) and made.steered:
                steered, stop = await self._steered(run_id, call)
                if steered is not None:
                    return steered
                made = await self._propose(
                    t, args, call, run_id, stop=stop, guarded=False, cands=cands
                )
        except (InvalidArguments, PayloadError) as exc:
            if guarded and (steered := (await self._steered(run_id, call))[0]) is not None:
                return steered  # the person spoke before this call: that comes first
            return Outcome(msg.INVALID_ARGS.format(tool=call.name, problems=exc), "invalid")
        return await self._onward(made, t, run_id)

    async def _onward(self, made: Created | SentCreate, t: Tool, run_id: str) -> Outcome:
        if isinstance(made, SentCreate):  # claimed, its create not yet confirmed
            return await self._run_shielded(made.request, t, run_id, sent=made)
        if made.claimed:
            return await self._run_shielded(made.request, t, run_id)
        return await self.settle(made.request, t, run_id)

    async def _resume(self, call: ToolCall, tools: ToolRegistry, run_id: str) -> Outcome | None:
        """What this call already got before the run moved workers, if anything."""
        for entry in await self.run_audit.entries(run_id):
            if entry.get("kind") == "user_steering" and entry.get("call_id") == call.id:
                template = msg.HARD_STOP if entry.get("hard_stop") else msg.STEERED
                return Outcome(
                    template.format(text=entry["text"]),
                    "steered",
                    stop=bool(entry.get("hard_stop")),
                )
        try:
            req = await self.requests.get(request_id(run_id, call.id, self.owner))
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

    async def _steered(self, run_id: str, call: ToolCall) -> tuple[Outcome | None, bool]:
        """A queued correction cancels this call: what the model reads instead, if one
        was queued, and whether a stop was asked."""
        s, stop = await self.steering.pop_and_stop(run_id)
        if s is None:
            return None, stop
        await self._consumed(s, run_id, call)
        text = (msg.HARD_STOP if s.hard_stop else msg.STEERED).format(text=s.text)
        return Outcome(text, "steered", stop=s.hard_stop), stop

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
        await self.steering.consumed(run_id, s)

    async def audit(self, run_id: str, entry: dict[str, Any]) -> None:
        await self.run_audit.append(run_id, entry)

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
            await self._cancel(req, SystemReason.RUN_STOPPED)
            req = await self.requests.get(req.id)
        while req.state == State.PENDING_REVIEW:
            left_ms = (req.expires_at or 0) - self.clock()
            if left_ms <= 0:
                with contextlib.suppress(HitlError):
                    await expire_overdue(self.requests, req.id, req.version)
            req = await self.requests.wait(req.id, max(0, left_ms) / 1000 + WAIT_SLACK_S)
        await self._running(run_id)
        return req

    async def _waiting(self, run_id: str, item_id: str) -> None:
        if self.runs is not None:
            await self.runs.update(run_id, state=RunState.WAITING, waiting_on=item_id)

    async def _running(self, run_id: str) -> None:
        if self.runs is not None:
            await self.runs.update(run_id, state=RunState.RUNNING, waiting_on=None)

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

    # ask_human

    async def ask(
        self, question: str, *, run_id: str, call_id: str, options: Sequence[str] = ()
    ) -> Outcome:
        """Put the question to a person and wait for the answer, its expiry or a stop."""
        qid = question_id(run_id, call_id)
        try:
            q = await self.questions.get(qid)
        except NotFound:
            # ask() takes no id; a store whose id factory yields the derived id gives the
            # same effect, and the existence check above keeps it from asking twice.
            fixed = self.questions.with_ids(lambda: qid[1:])
            q = await fixed.ask(
                question,
                timeout_ms=self.ask_timeout_ms,
                run_id=run_id,
                channel=self.channel,
                owner=self.owner,
                options=options,
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
            await self.questions.delivered(q.id)
            text = msg.ANSWERED.format(actor=q.answered_by or "The person", answer=q.answer or "")
            return Outcome(text, "answered")
        if q.state == QuestionState.CANCELLED:
            return Outcome(msg.QUESTION_CANCELLED, "stopped", stop=True)
        return Outcome(msg.NO_ANSWER, "no_answer")
