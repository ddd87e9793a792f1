"""Direct mode: the SDK talks to Redis itself, through the same stores the bot uses.

Loaded only when a gate opens a direct backend (`bot.sdk.connections`): it brings in
the runtime and the embedded Valkey, which an agent that speaks HTTP never needs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Unpack

from bot.config import Settings
from bot.core.models import ActionRequest, Question, Steering
from bot.core.policy import Policy
from bot.core.proposal import exempt
from bot.errors import NotFound
from bot.gate import execution
from bot.gate.filing import file_claimed
from bot.gate.guarded import SteeredFirst, consumed, create_unless_steered
from bot.gate.runtime import Runtime, open_runtime
from bot.messages import UNKNOWN_RUN
from bot.sdk.attach import require_store, warn_if_no_bot
from bot.sdk.backend import NewRequest
from bot.sdk.errors import steered
from bot.sdk.tracing import current_traceparent
from bot.store.free_call import SentCreate, fits
from bot.store.run.run_signals import signals_for


class DirectBackend:
    def __init__(
        self, rt: Runtime, *, actor: str, stack: contextlib.AsyncExitStack | None = None
    ) -> None:
        self.rt = rt
        self.actor = actor  # who the audit names for claims and reports
        self._stack = stack
        self._runs: set[str] = set()  # run ids this backend has taken for its actor
        # Free calls whose create was written but not read yet (`_send_free`): any later
        # move on one of these ids reads that reply first (`_settled`).
        self._sent: dict[str, SentCreate] = {}
        # Its runs' corrections and stops known locally, as a worker knows them: a free call
        # of a run known clear needs no store read first (None on a cluster).
        self._signals = signals_for(rt.requests.redis)

    @classmethod
    async def open(
        cls, settings: Settings | None, *, policy: Policy | None, actor: str
    ) -> DirectBackend:
        """Join the bot's store: REDIS_URL, else the embedded Valkey a running bot keeps in
        HITL_DATA_DIR. Never starts one (StoreUnavailable, with the fix, instead)."""
        settings = settings or Settings.load()
        require_store(settings)
        stack = contextlib.AsyncExitStack()
        rt = await stack.enter_async_context(open_runtime(settings, policy=policy))
        where = "REDIS_URL" if settings.redis_url else str(settings.hitl_data_dir)
        await warn_if_no_bot(rt, where)
        return cls(rt, actor=actor, stack=stack)

    async def create(self, **fields: Unpack[NewRequest]) -> ActionRequest:
        made, _ = await self._create(fields, claim=False)
        return made

    async def create_claimed(self, **fields: Unpack[NewRequest]) -> tuple[ActionRequest, bool]:
        """`create`; a call the policy exempts is claimed by this backend's actor in the
        same step (True)."""
        if (sent := await self._send_free(fields)) is not None:
            return sent.request, True
        return await self._create(fields, claim=True)

    async def _send_free(self, fields: NewRequest) -> SentCreate | None:
        """A free call with no idempotency key, outside any run or in a run known clear
        locally (bot/store/run/run_signals.py): its create and claim are written without
        waiting for the reply (bot/store/free_call.py), and the report reads it, so the
        call waits on one round trip. None: the usual path.

        A run not known clear: its create must refuse while a correction waits, before
        the call runs. A key: a key met before is a call made before, which must not
        run again, and only the reply tells."""
        store, policy, run_id = self.rt.requests, self.rt.policy, fields["run_id"]
        if fields["idempotency_key"] is not None:
            return None
        if run_id is not None and not (
            run_id in self._runs and self._signals is not None and self._signals.clear(run_id)
        ):
            return None
        if fields.get("candidates") or not fits(store):
            return None
        if not exempt(policy, fields["tool"], fields["args"], fields["risk"]):
            return None
        prep = await store.prepare(policy, **self._call(fields), claim_as=self.actor)
        sent = await file_claimed(store, prep)
        if sent is not None:
            self._sent[sent.request.id] = sent
        return sent

    def _call(self, fields: NewRequest) -> dict[str, Any]:
        """What every create of this backend names: the call, and this process's identity
        as its owner (as a token's would be over HTTP)."""
        return {
            "tool": fields["tool"],
            "args": fields["args"],
            "requester": fields["requester"] or self.actor,
            "on_behalf_of": fields["on_behalf_of"],
            "run_id": fields["run_id"],
            "channel": fields["channel"],
            "risk": fields["risk"],
            "args_schema": fields["args_schema"],
            "owner": self.actor,
            # the agent's span, as the API stores a `traceparent` header (docs/tracing.md)
            "trace": current_traceparent(),
        }

    async def _settled(self, rid: str) -> None:
        """A free call's create read back before anything else is done with its id."""
        if (sent := self._sent.get(rid)) is not None:
            try:
                await sent.confirmed()
            finally:
                self._sent.pop(rid, None)

    async def _create(self, fields: NewRequest, *, claim: bool) -> tuple[ActionRequest, bool]:
        run_id = fields["run_id"]
        if run_id is not None and run_id not in self._runs:
            # The run id is this identity's from its first use, as over HTTP: another
            # process under another name cannot file under it (bot/store/run/owners.py).
            title = fields["run_title"]
            if await self.rt.owners.claim(run_id, self.actor, title=title) != self.actor:
                raise NotFound(UNKNOWN_RUN.format(id=run_id))
            self._runs.add(run_id)
        # taken before the store reads the run's queue and stop flag with the create
        mark = None if run_id is None or self._signals is None else self._signals.mark(run_id)
        made = await create_unless_steered(
            self.rt.requests,
            self.rt.steering,
            self.rt.run_audit,
            self.rt.policy,
            **self._call(fields),
            idempotency_key=fields["idempotency_key"],
            candidates=fields.get("candidates") or (),
            claim_as=self.actor if claim else None,
        )
        if isinstance(made, SteeredFirst):
            s = made.correction
            raise steered(
                made.says,
                stopped=made.stopped,
                text=s.text if s else None,
                actor=s.actor if s else None,
            )
        if run_id is not None and self._signals is not None:
            self._signals.found_clear(run_id, mark)
        return made.request, made.claimed

    async def get(self, rid: str) -> ActionRequest:
        await self._settled(rid)
        return await self.rt.requests.get(rid)

    async def wait(self, rid: str, timeout_s: float) -> ActionRequest:
        await self._settled(rid)
        return await execution.wait_request(self.rt.requests, rid, timeout_s)

    async def claim(self, rid: str, *, token: str | None = None) -> ActionRequest:
        await self._settled(rid)
        return await execution.claim(
            self.rt.requests, rid, actor=self.actor, check=self.rt.claims, token=token
        )

    async def report(
        self,
        rid: str,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None,
        executing: bool = False,
        fence: str | None = None,
    ) -> ActionRequest:
        await self._settled(rid)
        return await execution.report(
            self.rt.requests,
            rid,
            ok=ok,
            detail=detail,
            compensated=compensated,
            actor=self.actor,
            check=self.rt.claims,
            executing=executing,
            fence=fence,
        )

    async def report_executed(
        self,
        rid: str,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None,
        fence: str | None = None,
    ) -> None:
        sent = self._sent.get(rid)
        if sent is not None and ok:
            try:  # pipelined behind the create: both replies in one round trip
                run_id = sent.request.run_id
                if await sent.succeeded(detail, run_id, actor=self.actor, signals=self._signals):
                    return
            finally:
                self._sent.pop(rid, None)
        await self._settled(rid)
        await execution.report_executed(
            self.rt.requests,
            rid,
            ok=ok,
            detail=detail,
            compensated=compensated,
            actor=self.actor,
            fence=fence,
            check=self.rt.claims,
        )

    async def cancel(self, rid: str, *, reason: str) -> ActionRequest:
        await self._settled(rid)
        return await execution.withdraw(self.rt.requests, rid, actor=self.actor, reason=reason)

    async def ask(
        self,
        question: str,
        *,
        timeout_s: float,
        run_id: str | None,
        channel: str | None,
        options: Sequence[str] = (),
    ) -> Question:
        return await self.rt.questions.ask(
            question,
            timeout_ms=max(1, int(timeout_s * 1000)),
            run_id=run_id,
            channel=channel,
            owner=self.actor,
            options=options,
        )

    async def wait_question(self, qid: str, timeout_s: float) -> Question:
        return await execution.wait_question(self.rt.questions, qid, timeout_s)

    async def pop_steering(self, run_id: str) -> Steering | None:
        got = await self.rt.steering.pop(run_id)
        if got is not None:
            await consumed(self.rt.steering, self.rt.run_audit, run_id, got, tool="")
        return got

    async def aclose(self) -> None:
        for rid in list(self._sent):  # never reported: read back, so the connection returns
            with contextlib.suppress(Exception):
                await self._settled(rid)
        if self._stack is not None:
            await self._stack.aclose()
