"""Step 1½ of the tool boundary: filing a call as a request.

A free call of a run known clear locally (bot/store/run/run_signals.py) is sent without
waiting for the store's reply (bot/store/free_call.py); any other call is created
through the store, which on one Redis also refuses while the run has a correction
queued or a stop asked. A mixin of `bot.agent.gate.ToolGate`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from bot.agent.llm import ToolCall
from bot.agent.tools import Tool
from bot.core.ids import keyed_request_id
from bot.core.models import SYSTEM, WORKER
from bot.core.policy import Policy
from bot.core.proposal import exempt
from bot.gate.filing import file_call, file_claimed
from bot.sdk.tracing import current_traceparent
from bot.store.creating import Created
from bot.store.free_call import SentCreate
from bot.store.requests import RequestStore
from bot.store.run.run_signals import RunSignals
from bot.store.run.runs import RunStore

FILED_KEPT = 4096  # request ids a gate remembers filing (see `_first`)


def idempotency_key(run_id: str, call_id: str) -> str:
    return f"{run_id}:{call_id}"


def request_id(run_id: str, call_id: str, owner: str = WORKER) -> str:
    return keyed_request_id(idempotency_key(run_id, call_id), owner)


class Filing:
    requests: RequestStore
    policy: Policy
    runs: RunStore | None
    signals: RunSignals | None
    requester: str
    on_behalf_of: str | None
    owner: str
    _filed: OrderedDict[str, None]
    _schemas: dict[int, tuple[Tool, dict[str, Any]]]

    async def _propose(
        self,
        t: Tool,
        args: dict[str, Any],
        call: ToolCall,
        run_id: str,
        *,
        stop: bool,
        guarded: bool,
        cands: list[dict[str, Any]],
    ) -> Created:
        # A tool the policy exempts is created already claimed (one round trip), unless
        # the run was stopped: then it is created approved but unclaimed, and `settle`
        # withdraws it.
        free = not cands and exempt(self.policy, t.name, args, t.risk)
        return await file_call(
            self.requests,
            self.policy,
            **self._fields(t, args, call, run_id),
            claim_as=SYSTEM if free and not (stop and self.runs is not None) else None,
            unless_steered=run_id if guarded else None,
            candidates=cands,
        )

    async def _first(
        self,
        t: Tool,
        args: dict[str, Any],
        call: ToolCall,
        run_id: str,
        *,
        stop: bool,
        guarded: bool,
        cands: list[dict[str, Any]],
    ) -> Created | SentCreate:
        """The call's create: sent without waiting while the run is known clear locally;
        else through the store, which (guarded) also reads the run's queue and stop flag
        and so tells the local follower the run is clear."""
        # A call id this process already filed is the same call again (a model that
        # repeats ids): the store's answer decides, so it is asked.
        rid = request_id(run_id, call.id, self.owner)
        again = rid in self._filed
        self._filed[rid] = None
        while len(self._filed) > FILED_KEPT:
            self._filed.popitem(last=False)
        free = guarded and not cands and not again
        if free and (sent := await self._send_free(t, args, call, run_id)):
            return sent
        mark = self.signals.mark(run_id) if guarded and self.signals else None
        made = await self._propose(t, args, call, run_id, stop=stop, guarded=guarded, cands=cands)
        if self.signals is not None and not made.steered:
            self.signals.found_clear(run_id, mark)
        return made

    async def _send_free(
        self, t: Tool, args: dict[str, Any], call: ToolCall, run_id: str
    ) -> SentCreate | None:
        """A free call of a run known locally to have no correction queued and no stop
        asked (bot/store/run/run_signals.py): its create and claim are sent, not waited on
        (bot/store/free_call.py). None: the usual path."""
        if self.signals is None or not self.signals.clear(run_id):
            return None
        if not exempt(self.policy, t.name, args, t.risk):
            return None
        prep = await self.requests.prepare(
            self.policy, **self._fields(t, args, call, run_id), claim_as=SYSTEM
        )
        return await file_claimed(self.requests, prep)

    def _fields(self, t: Tool, args: dict[str, Any], call: ToolCall, run_id: str) -> Any:
        """What every create of this gate's calls names."""
        return dict(
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
            owner=self.owner,
            # Recorded for this agent's tool, so the Edit modal checks a person's edit
            # against it; held as the worker's, so nothing sent over the API replaces it.
            args_schema=self._schema(t),
            schema_by_worker=True,
            # the run's span (bot/agent/tracing.py): the request's span is its child
            trace=current_traceparent(),
        )

    def _schema(self, t: Tool) -> dict[str, Any]:
        """The tool's schema, built once per tool: pydantic builds it anew on every call."""
        hit = self._schemas.get(id(t))
        if hit is None or hit[0] is not t:
            hit = self._schemas[id(t)] = (t, t.schema())
        return hit[1]
