"""`require_approval`: run a function only after a person approved the exact call.

    @require_approval(gate, risk="high")
    async def refund(order_id: str, amount: float) -> str: ...

Each call: the bound arguments (`inspect.signature`, defaults applied) become
the request's `args`; the call waits for the decision; on approval it claims
the request (exactly once), runs the function with the approved arguments and
reports the outcome. Unedited, the function gets the very objects it was
called with; edited, it gets the approved JSON values. A rejection raises
`Rejected`, no decision `TimedOut`; the function never runs then. An exception
from the function is reported (`failed`) and re-raised; with `compensate`, the
compensating function runs with the same arguments and its outcome is
reported too (`rolled_back` or `manual_intervention`).

A function (or compensation) with a parameter named `fence` gets the claim's fencing
token in it, beside whatever idempotency key it derives from the call: pass it to the
system the action writes to. It is filled in by the gate, never reviewed; declare it
last or keyword-only.

Sync functions run in the caller's thread; only the gate's I/O goes to the
gate's private event loop, so they work with or without a running loop.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast

from bot.core.args.payload import canonical_args, payload_hash
from bot.core.args.schema import Compiled, compiled, fit_problems
from bot.core.models import ActionRequest, RiskTier, clip
from bot.errors import HitlError, PayloadError, UnconfirmedCreate
from bot.logs import mask
from bot.sdk import messages as msg
from bot.sdk.gate import Gate
from bot.sdk.schema import derive

P = ParamSpec("P")
R = TypeVar("R")
log = logging.getLogger(__name__)

Invocation = tuple[tuple[Any, ...], dict[str, Any]]
_K = inspect.Parameter
FENCE = "fence"  # the parameter the gate fills in with the claim's fence


@dataclass(frozen=True)
class _Call:
    args: dict[str, Any]  # what the reviewer sees
    hidden: dict[str, Any]  # passed through unreviewed: self, cls, `exclude`
    original: Invocation
    tool: str
    key: str | None

    def proposed_hash(self) -> str:
        """The hash of the call as made; only an approved call that may have been edited
        needs it (a free call's path skips it)."""
        return payload_hash(self.tool, self.args)


# What a completed call's return value is recorded as: enough to read on the card and in
# `hitl-bot show` ("refunded 40 on A1", a receipt id), never a whole response body.
OUTCOME_LIMIT = 500


def _clip(text: str) -> str:
    return clip(mask(text), OUTCOME_LIMIT)  # the logs' mask: a token in a result is not kept


def _failure(exc: BaseException) -> str:
    return _clip(f"{type(exc).__name__}: {exc}")


def _result(value: Any) -> str | None:
    """The wrapped function's return value as the request's recorded outcome."""
    if value is None:
        return None
    if isinstance(value, str):
        return _clip(value)
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # circular or otherwise unserialisable
        text = repr(value)
    return _clip(text)


class _Guard:
    def __init__(
        self,
        gate: Gate,
        fn: Callable[..., Any],
        *,
        tool: str | None,
        risk: RiskTier | str | None,
        run_id: str | None,
        run_title: str | None,
        timeout: float | None,
        exclude: Iterable[str],
        idempotency_key: Callable[..., str | None] | None,
        compensate: Callable[..., Any] | None,
        requester: str | None,
        channel: str | None,
        args_schema: dict[str, Any] | None,
    ) -> None:
        self.gate = gate
        self.fn = fn
        self.sig = inspect.signature(fn)
        self.tool = tool or fn.__name__
        self.risk = RiskTier(risk) if risk is not None else None
        self.run_id = run_id
        self.run_title = run_title
        self.timeout = timeout
        names = list(self.sig.parameters)
        self.fenced = FENCE in self.sig.parameters
        self.hidden = (
            set(exclude)
            | ({names[0]} if names and names[0] in ("self", "cls") else set())
            | ({FENCE} if self.fenced else set())
        )
        self.key_fn = idempotency_key
        self.compensate = compensate
        self.requester = requester
        self.channel = channel
        self.declared = args_schema is not None
        self.schema = args_schema if self.declared else derive(self.tool, fn, self.hidden)
        self._fit: Compiled | None = None  # built on first use: it costs more than a check

    # -- arguments -----------------------------------------------------------------

    def prepare(self, a: tuple[Any, ...], kw: dict[str, Any]) -> _Call:
        # The caller leaves `fence` out (the claim fills it in): bound here only so the
        # rest of a wrong call fails as it would unwrapped.
        placeholder = {FENCE: None} if self.fenced and FENCE not in kw else {}
        bound = self.sig.bind(*a, **kw, **placeholder)
        bound.apply_defaults()
        if self.fenced:
            del bound.arguments[FENCE]
        review = {k: v for k, v in bound.arguments.items() if k not in self.hidden}
        hidden = {k: v for k, v in bound.arguments.items() if k in self.hidden}
        key = self.key_fn(*a, **kw) if self.key_fn is not None else None
        return _Call(review, hidden, (a, kw), self.tool, key)

    def rebind(self, args: dict[str, Any], hidden: dict[str, Any]) -> Invocation:
        """Positional and keyword arguments that call the function with `args`."""
        params = list(self.sig.parameters.values())
        unknown = set(args) - {p.name for p in params}
        if unknown:
            raise TypeError(f"unexpected arguments {sorted(unknown)}")
        star = any(p.kind == _K.VAR_POSITIONAL for p in params)
        pos: list[Any] = []
        kws: dict[str, Any] = {}
        values = {**args, **hidden}
        for p in params:
            if p.name not in values:
                optional = p.kind in (_K.VAR_POSITIONAL, _K.VAR_KEYWORD) or p.default is not p.empty
                if optional or (self.fenced and p.name == FENCE):
                    continue
                raise TypeError(f"missing argument {p.name!r}")
            v = values[p.name]
            if p.kind == _K.VAR_POSITIONAL:
                pos.extend(v)
            elif p.kind == _K.VAR_KEYWORD:
                kws.update(v)
            elif p.kind == _K.POSITIONAL_ONLY or (p.kind == _K.POSITIONAL_OR_KEYWORD and star):
                pos.append(v)
            else:
                kws[p.name] = v
        self.sig.bind_partial(*pos, **kws) if self.fenced else self.sig.bind(*pos, **kws)
        return tuple(pos), kws

    def fenced_call(self, fn: Callable[..., Any], inv: Invocation, fence: str | None) -> Any:
        """Call `fn` (the function or its compensation) with `inv`, and the claim's fence
        if `fn` takes one."""
        pa, pk = inv
        sig = self.sig if fn is self.fn else inspect.signature(fn)
        if FENCE not in sig.parameters:
            return fn(*pa, **pk)
        bound = sig.bind_partial(*pa, **pk)
        bound.arguments[FENCE] = fence
        return fn(*bound.args, **bound.kwargs)

    def schema_for(self, call: _Call) -> dict[str, Any] | None:
        """The schema to record with this call.

        A derived schema can be stricter than Python (a hint of `str` called with an
        int): then this call goes without one rather than failing where the undecorated
        function would have run. A declared schema is the caller's word: it must fit.
        """
        if self.schema is None or self.declared:
            return self.schema
        if self._fit is None:
            self._fit = compiled(self.schema)
        if fit_problems(self._fit, json.loads(canonical_args(call.args))):
            log.warning(msg.SCHEMA_SKIPPED, self.tool)
            return None
        return self.schema

    # -- the gate's side (async, on whichever loop runs it) ------------------------

    async def obtain(self, call: _Call) -> tuple[ActionRequest, Invocation]:
        """Wait for approval, check the approved arguments fit, claim: ready to run."""
        req, claimed = await self.gate.acquire(
            self.tool,
            call.args,
            risk=self.risk,
            run_id=self.run_id,
            run_title=self.run_title,
            requester=self.requester,
            channel=self.channel,
            idempotency_key=call.key,
            timeout=self.timeout,
            args_schema=self.schema_for(call),
            claim=True,
        )
        if claimed:  # a free call: created and claimed in one step, never edited
            return req, call.original
        invocation = call.original
        if req.payload_hash != call.proposed_hash():  # a person edited the arguments
            try:
                invocation = self.rebind(req.args, call.hidden)
            except (TypeError, ValueError) as exc:
                try:
                    await self.gate.cancel(req.id, reason="edit_does_not_fit")
                except HitlError as cancel_exc:
                    log.warning("could not withdraw %s: %s", req.id, cancel_exc)
                raise PayloadError(msg.EDIT_DOES_NOT_FIT.format(tool=self.tool, error=exc)) from exc
        return await self.gate.claim(req.id), invocation

    async def report(
        self,
        req: ActionRequest,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None = None,
        first: bool = False,
    ) -> None:
        """Never raises: the side effect happened, so the caller must get its result."""
        try:
            if first:
                await self.gate.report_executed(
                    req.id, ok=ok, detail=detail, compensated=compensated, fence=req.fence
                )
            else:
                await self.gate.report(
                    req.id, ok=ok, detail=detail, compensated=compensated, fence=req.fence
                )
        except UnconfirmedCreate as exc:  # a free call's create, sent unawaited, failed
            log.error(msg.CREATE_UNCONFIRMED, req.id, exc)
        except HitlError as exc:
            log.warning(msg.REPORT_FAILED, req.id, exc)

    # -- the two ways of running ---------------------------------------------------

    async def run_async(self, a: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        req, inv = await self.obtain(self.prepare(a, kw))
        try:
            result = await cast(Awaitable[Any], self.fenced_call(self.fn, inv, req.fence))
        except BaseException as exc:
            await self.report(
                req, ok=False, detail=_failure(exc), compensated=bool(self.compensate), first=True
            )
            if self.compensate is not None:
                try:
                    undone = self.fenced_call(self.compensate, inv, req.fence)
                    if inspect.isawaitable(undone):
                        await undone
                except Exception as comp_exc:
                    await self.report(req, ok=False, detail=_failure(comp_exc))
                else:
                    await self.report(req, ok=True, detail="compensated")
            raise
        await self.report(req, ok=True, detail=_result(result), first=True)
        return result

    def run_sync(self, a: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        gate = self.gate
        req, inv = gate.run_sync(self.obtain(self.prepare(a, kw)))
        try:
            result = self.fenced_call(self.fn, inv, req.fence)
        except BaseException as exc:
            comp = bool(self.compensate)
            failed = self.report(req, ok=False, detail=_failure(exc), compensated=comp, first=True)
            gate.run_sync(failed)
            if self.compensate is not None:
                try:
                    self.fenced_call(self.compensate, inv, req.fence)
                except Exception as comp_exc:
                    gate.run_sync(self.report(req, ok=False, detail=_failure(comp_exc)))
                else:
                    gate.run_sync(self.report(req, ok=True, detail="compensated"))
            raise
        gate.run_sync(self.report(req, ok=True, detail=_result(result), first=True))
        return result


def require_approval(
    gate: Gate,
    tool: str | None = None,
    risk: RiskTier | str | None = None,
    run_id: str | None = None,
    timeout: float | None = None,
    *,
    exclude: Iterable[str] = (),
    idempotency_key: Callable[..., str | None] | None = None,
    compensate: Callable[..., Any] | None = None,
    requester: str | None = None,
    channel: str | None = None,
    args_schema: dict[str, Any] | None = None,
    run_title: str | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Gate a sync or async function behind a person's approval.

    tool: the name reviewers see (default: the function's name).
    risk: raises the policy's tier for this tool (never lowers it).
    run_title: what the run is, for people: its name on its cards, in the App Home and
        in `hitl-bot runs` (the first call under a new run id names it).
    timeout: seconds to wait for a decision before withdrawing (default: the
        request's own deadlines, escalations included).
    exclude: parameters passed through unreviewed (a context object, a client);
        `self`/`cls` always are.
    idempotency_key: called with the call's arguments; the same key finds the
        same request again instead of asking twice (a retried tool call).
    compensate: called with the same arguments if the function raises; its
        outcome is reported as rolled_back or manual_intervention.
    args_schema: the JSON Schema of the reviewed arguments (default: derived from
        the signature's type hints where it can be); recorded for the tool, so a
        person's edit that does not fit it is refused before it is approved.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        guard = _Guard(
            gate,
            fn,
            tool=tool,
            risk=risk,
            run_id=run_id,
            run_title=run_title,
            timeout=timeout,
            exclude=exclude,
            idempotency_key=idempotency_key,
            compensate=compensate,
            requester=requester,
            channel=channel,
            args_schema=args_schema,
        )
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def gated_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                return await guard.run_async(args, kwargs)

            return cast(Callable[P, R], gated_async)

        @functools.wraps(fn)
        def gated(*args: P.args, **kwargs: P.kwargs) -> Any:
            return guard.run_sync(args, kwargs)

        return cast(Callable[P, R], gated)

    return decorate
