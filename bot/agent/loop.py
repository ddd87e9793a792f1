"""One agent run, step by step, with every step saved in Redis.

The transcript is the run's state: an assistant message whose tool calls have
no results yet *is* the pending call, and the ids the gate derives from each
call id lead back to its request or question. So a run picked up by another
worker needs nothing but the run id to carry on where the last one stopped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from bot.agent import messages as msg
from bot.agent.errors import ModelError
from bot.agent.gate import ToolGate, question_id, request_id
from bot.agent.llm import ChatClient, ToolCall, tool_calls_of
from bot.agent.loader import Agent
from bot.clock import Clock, wall_ms
from bot.config import Settings
from bot.core.models import RUN_FINAL, Run, RunState
from bot.core.policy import Policy
from bot.gate.runtime import Runtime
from bot.signing import PublicKeys, public_keys
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.run_audit import RunAudit
from bot.store.run.runs import RunStore
from bot.store.run.steering import SteeringStore
from bot.store.stores import StoreSet

Message = dict[str, Any]
STEP_RESULT_MAX = 200  # characters of each earlier tool result kept in a summary
SUMMARY_STEPS_MAX = 40


@dataclass(frozen=True)
class LoopConfig:
    max_turns: int | None = None  # None: the agent's own limit
    compact_after_chars: int = 24_000  # transcript size past which a resume is summarised
    long_wait_ms: int = 5 * 60_000  # a wait at least this long counts as "after a long wait"
    ask_timeout_ms: int = 30 * 60_000


@dataclass(frozen=True)
class Stores:
    """The stores a run works through, and the policy its tool calls are judged by."""

    store: StoreSet
    policy: Policy
    clock: Clock = wall_ms  # the run's own: the stores keep theirs
    trusted: PublicKeys | None = None  # serve's public key: claims of anything else are refused
    reread: bool = False  # `trusted` is the environment's: read it again for a key rotated in

    @classmethod
    def on(cls, store: StoreSet, policy: Policy, trusted: PublicKeys | None = None) -> Self:
        """`trusted`: None takes serve's public key from the environment, as the worker does."""
        keys = trusted if trusted is not None else public_keys(Settings())
        return cls(store, policy, store.clock, keys, reread=trusted is None)

    @classmethod
    def of(cls, rt: Runtime) -> Self:
        return cls(rt, rt.policy, rt.clock, rt.claims.keys, reread=True)

    @property
    def runs(self) -> RunStore:
        return self.store.runs

    @property
    def requests(self) -> RequestStore:
        return self.store.requests

    @property
    def questions(self) -> QuestionStore:
        return self.store.questions

    @property
    def steering(self) -> SteeringStore:
        return self.store.steering

    @property
    def run_audit(self) -> RunAudit:
        return self.store.run_audit


class RunLoop:
    def __init__(
        self, agent: Agent, llm: ChatClient, stores: Stores, config: LoopConfig | None = None
    ) -> None:
        self.agent = agent
        self.llm = llm
        self.stores = stores
        self.runs = stores.runs
        self.clock = stores.clock
        self.policy = agent.merged_policy(stores.policy)
        self.config = config or LoopConfig()
        self.max_turns = self.config.max_turns or agent.max_turns

    async def run(self, run_id: str) -> Run:
        """Drive the run to a final state (or to where this task is cancelled) and return it."""
        run = await self.runs.get(run_id)
        if run.state in RUN_FINAL:
            return run
        messages = await self.runs.transcript(run_id)
        resumed = bool(messages)
        if not messages:
            messages = [
                {"role": "system", "content": self.agent.system_prompt},
                {"role": "user", "content": run.prompt},
            ]
            await self.runs.save_transcript(run_id, messages)
        gate = ToolGate(
            requests=self.stores.requests,
            questions=self.stores.questions,
            steering=self.stores.steering,
            run_audit=self.stores.run_audit,
            policy=self.policy,
            runs=self.runs,
            clock=self.clock,
            requester=self.agent.requester,
            on_behalf_of=run.requester or None,
            channel=run.channel,  # where its questions go; never where approvals are reviewed
            owner=run.owner,
            ask_timeout_ms=self.config.ask_timeout_ms,
            trusted=self.stores.trusted,
            reread=self.stores.reread,
        )
        if resumed:
            await gate.audit(run_id, {"at": self.clock(), "kind": "resumed", "run_id": run_id})
        if run.state != RunState.WAITING:  # a waiting run stays so until its wait resumes
            await self.runs.update(run_id, state=RunState.RUNNING)
        try:
            return await self._steps(run, messages, gate, resumed)
        except ModelError as exc:
            return await self._finish(gate, run_id, RunState.FAILED, error=str(exc))

    async def _steps(self, run: Run, messages: list[Message], gate: ToolGate, resumed: bool) -> Run:
        run_id, turns = run.id, run.turns
        tools = self.agent.tools
        # Calls pending when this worker loaded the run may have got a request, a question
        # or a correction from the worker before; later calls are new for sure.
        carried = {c.id for c in unanswered(messages)} if resumed else set()
        waited_long = resumed
        while True:
            if (await self.runs.get(run_id)).stop_requested:
                return await self._finish(gate, run_id, RunState.STOPPED, result=msg.RUN_STOPPED)
            calls = unanswered(messages)
            if calls:  # one call per pass, so the stop check above precedes every call
                call, started = calls[0], self.clock()
                out = await gate.check(call, tools, run_id=run_id, resumed=call.id in carried)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": out.text})
                await self.runs.save_transcript(run_id, messages)
                if out.stop:
                    return await self._finish(
                        gate, run_id, RunState.STOPPED, result=msg.RUN_STOPPED
                    )
                waited_long = waited_long or self.clock() - started >= self.config.long_wait_ms
                continue
            if waited_long and size(messages) > self.config.compact_after_chars:
                before = len(messages)
                messages = compact(messages, task=run.prompt)
                await self.runs.save_transcript(run_id, messages)
                await gate.audit(
                    run_id,
                    {"at": self.clock(), "kind": "compacted", "messages": before},
                )
            waited_long = False
            if turns >= self.max_turns:
                text = msg.TURN_LIMIT.format(turns=self.max_turns)
                return await self._finish(gate, run_id, RunState.TURN_LIMIT, error=text)
            reply = await self.llm.complete(messages, tools.specs())
            turns += 1
            await self._unique_ids(reply.message, messages, run_id, turns, run.owner)
            messages.append(reply.message)
            await self.runs.save_transcript(run_id, messages)
            await self.runs.update(run_id, turns=turns)
            if not reply.tool_calls:
                late = await gate.steer(run_id, None)
                if late is not None and late.hard_stop:
                    return await self._finish(
                        gate, run_id, RunState.STOPPED, result=msg.RUN_STOPPED
                    )
                if late is not None:  # a correction came after the last tool call
                    messages.append({"role": "user", "content": late.text})
                    await self.runs.save_transcript(run_id, messages)
                    continue
                return await self._finish(
                    gate, run_id, RunState.FINISHED, result=reply.content or ""
                )

    async def _unique_ids(
        self, reply: Message, messages: Sequence[Message], run_id: str, turn: int, owner: str
    ) -> None:
        """Give a reused tool call id a new one before anything is derived from it.

        Request and question ids come from (run id, call id); some servers number
        calls `call_0, call_1` afresh every turn, and a reused id would find the
        earlier call's request and report it instead of running the new call.
        """
        used = {c.id for m in messages for c in tool_calls_of(m)}
        for i, c in enumerate(reply.get("tool_calls") or ()):
            rid, qid = request_id(run_id, c["id"], owner), question_id(run_id, c["id"])
            if c["id"] in used or await self.runs.calls_filed(rid, qid):
                c["id"] = f"{c['id']}-t{turn}.{i}"
            used.add(c["id"])

    async def _finish(
        self,
        gate: ToolGate,
        run_id: str,
        state: RunState,
        *,
        result: str | None = None,
        error: str | None = None,
    ) -> Run:
        await gate.audit(
            run_id, {"at": self.clock(), "kind": "run_end", "state": state.value, "error": error}
        )
        return await self.runs.update(
            run_id, state=state, result=result, error=error, waiting_on=None
        )


def unanswered(messages: Sequence[Message]) -> list[ToolCall]:
    """The last assistant message's tool calls that have no result yet."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            answered = {m.get("tool_call_id") for m in messages[i + 1 :] if m["role"] == "tool"}
            return [c for c in tool_calls_of(messages[i]) if c.id not in answered]
    return []


def size(messages: Sequence[Message]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False)) for m in messages)


def compact(messages: Sequence[Message], *, task: str) -> list[Message]:
    """System prompt, a summary of everything before the last tool exchange, that exchange."""
    last = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")),
        default=len(messages),
    )
    head = [m for m in messages[:last] if m.get("role") != "system"]
    system = [m for m in messages[:1] if m.get("role") == "system"]
    steps = _steps_of(head, task)[-SUMMARY_STEPS_MAX:] or [msg.SUMMARY_NONE]
    summary = msg.SUMMARY.format(task=task, steps="\n".join(steps))
    return [*system, {"role": "user", "content": summary}, *messages[last:]]


def _steps_of(head: Sequence[Message], task: str) -> list[str]:
    results = {
        m.get("tool_call_id"): str(m.get("content") or "") for m in head if m["role"] == "tool"
    }
    lines: list[str] = []
    for m in head:
        content = str(m.get("content") or "")
        if m["role"] == "user" and content.startswith(msg.SUMMARY_INTRO):
            # An earlier summary: carry its steps over rather than summarising a summary.
            carried = content.split(msg.SUMMARY_STEPS, 1)[-1].strip().splitlines()
            lines += [line for line in carried if line != msg.SUMMARY_NONE]
        elif m["role"] == "user" and content != task:
            lines.append(msg.SUMMARY_PERSON.format(text=_short(content)))
        elif m["role"] == "assistant":
            if content:
                lines.append(msg.SUMMARY_SAID.format(text=_short(content)))
            for c in tool_calls_of(m):
                call = f"{c.name}({_short(c.arguments)})"
                result = _short(results.get(c.id, "no result"))
                lines.append(msg.SUMMARY_STEP.format(call=call, result=result))
    return lines


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= STEP_RESULT_MAX else text[: STEP_RESULT_MAX - 1] + "…"
