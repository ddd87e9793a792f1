"""`Gate`: ask a person before a tool runs, from any Python agent.

    gate = Gate.from_env()        # HITL_API_URL + HITL_API_TOKEN: HTTP; else Redis directly
    req = await gate.request_approval("refund", {"order": "A1", "amount": 40})
    # approved (maybe with edited args) -> req.args; rejected -> Rejected; nobody -> TimedOut

Waiting is push-based in both modes (XREAD BLOCK in Redis, a long-poll over
HTTP) and always bounded: by the request's own deadline, re-armed while it
escalates, by a grace period for the sweeper, and by the caller's `timeout`.
A request the caller stops waiting for is withdrawn (cancelled), so nobody
approves a call that will never run.

Connections belong to an event loop, so a `Gate` opens one backend per loop
it is used from; sync callers share one private loop thread (`bot.sdk.connections`).
Close with `await gate.aclose()` (or `gate.close()` after sync use). Questions
and corrections: `bot.sdk.asking`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import time
import weakref
from typing import Any, Unpack

import httpx

from bot import messages as bot_msg
from bot.clock import wall_ms
from bot.config import Settings
from bot.core.args.payload import canonical_args
from bot.core.models import ActionRequest, clip
from bot.core.policy import Policy
from bot.core.proof.fence import claim_retried
from bot.core.states import Event, State, SystemReason
from bot.core.wire import ApprovalIn, checked
from bot.errors import ConfigError, InvalidTransition
from bot.sdk import messages as msg
from bot.sdk.asking import Asking
from bot.sdk.backend import Backend, NewRequest
from bot.sdk.bridge import LoopThread
from bot.sdk.errors import TimedOut, steered
from bot.sdk.fields import CallFields
from bot.sdk.outcome import outcome

DEFAULT_REQUESTER = "sdk"
MAX_WAIT_S = 55.0  # one long-poll; under the server's 60 s cap
SWEEPER_GRACE_S = 30.0  # past a deadline with no escalation: no sweeper is running
FIELDS_CACHE = 256  # distinct (tool, requester, ...) sets known to pass ApprovalIn


class Gate(Asking):
    """The approval gate, over the HTTP API (`api_url`) or straight to Redis (otherwise)."""

    def __init__(
        self,
        *,
        api_url: str | None = None,
        api_token: str | None = None,
        settings: Settings | None = None,
        policy: Policy | None = None,
        requester: str = DEFAULT_REQUESTER,
        channel: str | None = None,
        http_timeout_s: float = 10.0,
        max_wait_s: float = MAX_WAIT_S,
        sweeper_grace_s: float = SWEEPER_GRACE_S,
        transport: httpx.AsyncBaseTransport | None = None,
        gone_reason: str = "caller_gone",
    ) -> None:
        if api_url and not api_token:
            raise ConfigError(msg.NEED_TOKEN)
        self.api_url = api_url or None
        self._api_token = api_token
        self.settings = settings
        self.policy = policy
        self.requester = requester
        self.channel = channel
        self.http_timeout_s = http_timeout_s
        self.max_wait_s = max_wait_s
        self.sweeper_grace_s = sweeper_grace_s
        self._transport = transport
        # The reason code a request gets when its caller stops waiting: an MCP gateway
        # says `abandoned` (the client cancelled the call or went away).
        self.gone_reason = gone_reason
        self._backends: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Task[Backend]
        ] = weakref.WeakKeyDictionary()
        self._sync = LoopThread()
        self._fields_ok: dict[tuple[Any, ...], tuple[ApprovalIn, Any]] = {}

    @classmethod
    def from_env(cls, **options: Any) -> Gate:
        """HITL_API_URL set: HTTP mode with HITL_API_TOKEN. Otherwise direct mode, with
        the same settings as every hitl-bot process (REDIS_URL, else the embedded Valkey;
        HITL_POLICY)."""
        url = os.environ.get("HITL_API_URL") or None
        if url:
            return cls(api_url=url, api_token=os.environ.get("HITL_API_TOKEN") or None, **options)
        return cls(**options)

    @property
    def mode(self) -> str:
        return "http" if self.api_url else "direct"

    # -- approvals ---------------------------------------------------------------------

    async def submit(
        self, tool: str, args: dict[str, Any], **call: Unpack[CallFields]
    ) -> ActionRequest:
        """Create the request (or find it again by `idempotency_key`); do not wait."""
        made, _ = await self._submit(tool, args, **call)
        return made

    async def _submit(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        claim: bool = False,
        candidates: list[dict[str, Any]] | None = None,
        **call: Unpack[CallFields],
    ) -> tuple[ActionRequest, bool]:
        """`submit`, and with `claim` in direct mode, a call the policy exempts from review
        is created already claimed by this gate (one round trip): then True. `candidates`:
        a proposal (`propose`)."""
        canonical_args(args)  # plain JSON only, in both modes (HTTP would coerce dates)
        if candidates is not None:
            checked(ApprovalIn, tool=tool, candidates=candidates)
        body = self._fields(
            tool=tool,
            run_id=call.get("run_id"),
            run_title=call.get("run_title"),
            requester=call.get("requester") or self.requester,
            on_behalf_of=call.get("on_behalf_of"),
            channel=call.get("channel") or self.channel,
            idempotency_key=call.get("idempotency_key"),
            risk=call.get("risk"),
            args_schema=call.get("args_schema"),
        )
        who = body.requester or self.requester
        b = await self.backend()
        fields: NewRequest = {
            "tool": body.tool,
            "args": args,
            "requester": None if self.mode == "http" and who == DEFAULT_REQUESTER else who,
            "on_behalf_of": body.on_behalf_of,
            "run_id": body.run_id,
            "run_title": body.run_title,
            "channel": body.channel,
            "idempotency_key": body.idempotency_key,
            "risk": body.risk,
            "args_schema": body.args_schema,
        }
        if candidates is not None:
            fields["candidates"] = candidates
        if claim:
            return await b.create_claimed(**fields)
        return await b.create(**fields), False

    def _fields(self, **fields: Any) -> ApprovalIn:
        """The call's fields but its arguments (checked by the caller), as `ApprovalIn`.

        A decorated function sends the same set on every call, and the check cost as much
        as the rest of a free call: each set without an idempotency key is checked once.
        The schema is compared by value against a copy, so one changed in place is
        checked again.
        """
        schema = fields["args_schema"]
        key = (
            *(v for k, v in sorted(fields.items()) if k != "args_schema"),
            None if schema is None else id(schema),
        )
        keep = fields["idempotency_key"] is None
        try:
            hit = self._fields_ok.get(key)
        except TypeError:  # an unhashable value: the check below names the field
            hit, keep = None, False
        if hit is not None and hit[1] == schema:
            return hit[0]
        body = checked(ApprovalIn, **fields)
        if keep:
            if len(self._fields_ok) >= FIELDS_CACHE:
                self._fields_ok.clear()
            self._fields_ok[key] = (body, copy.deepcopy(schema))
        return body

    async def decision(
        self, request: ActionRequest | str, *, timeout: float | None = None
    ) -> ActionRequest:
        """Wait for the request to leave review: return it approved, or raise.

        Raises `Rejected` (a person said no), `TimedOut` (nobody decided: auto_rejected,
        no sweeper past the deadline, or `timeout` seconds passed) or `Cancelled`.
        """
        b = await self.backend()
        req = request if isinstance(request, ActionRequest) else await b.get(request)
        give_up = None if timeout is None else time.monotonic() + timeout
        try:
            while req.state == State.PENDING_REVIEW:
                late_s = 0.0 if req.expires_at is None else (wall_ms() - req.expires_at) / 1000
                if give_up is not None and time.monotonic() >= give_up:
                    why = msg.CALLER_TIMEOUT.format(tool=req.tool, timeout=timeout)
                    return await self._withdraw(b, req, "caller_timeout", why)
                if late_s > self.sweeper_grace_s:
                    why = msg.NO_SWEEPER.format(tool=req.tool, late=late_s)
                    return await self._withdraw(b, req, "no_sweeper", why)
                chunk = min(self.max_wait_s, max(0.05, self.sweeper_grace_s - late_s))
                if give_up is not None:
                    chunk = min(chunk, max(0.0, give_up - time.monotonic()))
                req = await b.wait(req.id, chunk)
        except asyncio.CancelledError:
            # The caller stopped waiting (a framework's tool timeout): withdraw the request.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(b.cancel(req.id, reason=self.gone_reason), 5)
            raise
        await self._spoken(b, req)
        return outcome(req)

    async def _spoken(self, b: Backend, req: ActionRequest) -> None:
        """Raise what a person said, if their correction or their stop withdrew `req`."""
        res = req.resolution
        if req.state != State.CANCELLED or res is None or res.event != Event.CANCEL:
            return
        if res.reason_code == SystemReason.SUPERSEDED and req.run_id:
            s = await b.pop_steering(req.run_id)
            if s is None:  # another call of the run read the words first
                says = msg.SUPERSEDED_NO_TEXT.format(tool=req.tool)
                raise steered(says, stopped=False, text=None, actor=res.actor, request=req)
            template = bot_msg.CALL_HARD_STOP if s.hard_stop else bot_msg.CALL_STEERED
            raise steered(
                template.format(text=s.text),
                stopped=s.hard_stop,
                text=s.text,
                actor=s.actor,
                request=req,
            )
        if res.reason_code == SystemReason.RUN_STOPPED:
            # Who withdrew it and why, as for any withdrawal, then what the model must do.
            says = msg.CANCELLED.format(tool=req.tool, actor=res.actor, reason=res.reason_code)
            raise steered(
                f"{says} {bot_msg.CALL_RUN_STOPPED}",
                stopped=True,
                text=None,
                actor=res.actor,
                request=req,
            )

    async def _withdraw(
        self, b: Backend, req: ActionRequest, reason: str, why: str
    ) -> ActionRequest:
        latest = await b.get(req.id)
        if latest.state != State.PENDING_REVIEW:  # decided at the last moment: that stands
            return outcome(latest)
        try:
            gone = await b.cancel(req.id, reason=reason)
        except InvalidTransition:  # decided in the meantime: that decision stands
            return outcome(await b.get(req.id))
        raise TimedOut(why, request=gone, reason_code=reason, actor=self.requester)

    async def request_approval(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        timeout: float | None = None,
        **call: Unpack[CallFields],
    ) -> ActionRequest:
        """Submit and wait: the approved request (its `args` may have been edited)."""
        req, _ = await self.acquire(tool, args, timeout=timeout, **call)
        return req

    async def propose(
        self,
        tool: str,
        candidates: list[dict[str, Any]],
        *,
        timeout: float | None = None,
        **call: Unpack[CallFields],
    ) -> ActionRequest:
        """Offer a person 2 to 5 candidate calls of `tool` on one card and wait: the
        approved request, whose `args` are the candidate chosen (claim and run it as any
        approved request). Raises as `decision` does; nobody choosing in time rejects."""
        made, _ = await self._submit(tool, {}, candidates=candidates, **call)
        return await self.decision(made, timeout=timeout)

    async def acquire(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        timeout: float | None = None,
        claim: bool = False,
        **call: Unpack[CallFields],
    ) -> tuple[ActionRequest, bool]:
        """`request_approval`; with `claim`, a free call may come back already claimed
        by this gate (True), ready to run and report, in one round trip."""
        submitting = asyncio.ensure_future(self._submit(tool, args, claim=claim, **call))
        try:
            req, claimed = await asyncio.shield(submitting)
        except asyncio.CancelledError:
            # Cancelled while the request was being created: it may exist already,
            # and a person must not be asked about a call nobody will make.
            with contextlib.suppress(Exception):
                made, claimed = await asyncio.wait_for(submitting, 5)
                b = await self.backend()
                if claimed:  # claimed but never run: say so, nothing to undo
                    await b.report(made.id, ok=False, detail=msg.NOT_RUN, compensated=True)
                    await b.report(made.id, ok=True, detail=msg.NOT_RUN, compensated=None)
                else:
                    await asyncio.wait_for(b.cancel(made.id, reason=self.gone_reason), 5)
            raise
        if claimed:
            return req, True
        return await self.decision(req, timeout=timeout), False

    async def get(self, request_id: str) -> ActionRequest:
        return await (await self.backend()).get(request_id)

    async def claim(self, request_id: str, *, token: str | None = None) -> ActionRequest:
        """approved -> executing, exactly once; a second claim raises AlreadyResolved. The
        request comes back with its `fence`: hand it to the action and to `report`.

        The claim's token (`token`, else a fresh one) is sent again if the store did not
        confirm the claim (NotReplicated, or it was out of reach): the same executor then
        gets its own claim back, never a second one. Still unconfirmed, it raises, and the
        call must not run."""
        b = await self.backend()
        return await claim_retried(lambda t: b.claim(request_id, token=t), token)

    async def report(
        self,
        request_id: str,
        *,
        ok: bool,
        detail: str | None = None,
        compensated: bool | None = None,
        executing: bool = False,
        fence: str | None = None,
    ) -> ActionRequest:
        """Report the execution (or, on rollback_pending, the compensation).

        `executing`: this gate claimed the request and has not reported yet (saves a read).
        `fence`: the claimed request's; a report whose claim was superseded since raises
        StaleFence instead of overwriting the later claim's (without it: accepted).
        """
        clipped = None if detail is None else clip(detail)
        return await (await self.backend()).report(
            request_id,
            ok=ok,
            detail=clipped,
            compensated=compensated,
            executing=executing,
            fence=fence,
        )

    async def report_executed(
        self,
        request_id: str,
        *,
        ok: bool,
        detail: str | None = None,
        compensated: bool | None = None,
        fence: str | None = None,
    ) -> None:
        """`report` by the gate that claimed the request and has not reported yet, when
        the caller needs nothing back: in direct mode the request is not read back."""
        clipped = None if detail is None else clip(detail)
        await (await self.backend()).report_executed(
            request_id, ok=ok, detail=clipped, compensated=compensated, fence=fence
        )

    async def cancel(self, request_id: str, *, reason: str = "withdrawn") -> ActionRequest:
        return await (await self.backend()).cancel(request_id, reason=reason)
