"""`/v1/approvals`: create a gated call, long-poll its decision, claim it, report it."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import Field

from bot.api.auth import caller
from bot.api.errors import documented, steered_response
from bot.api.longpoll import hold
from bot.api.ownership import Ownership
from bot.api.schemas import ApprovalIn, CancelIn, ClaimIn, ItemPath, ResultIn, Wait
from bot.api.waiting import DEFAULT_MAX_WAITING, check_room
from bot.core.models import ActionRequest
from bot.core.tracecontext import canonical
from bot.gate import execution
from bot.gate.grant_pass import may_pass, pass_if_granted
from bot.gate.guarded import SteeredFirst, create_unless_steered
from bot.gate.runtime import Runtime


class ApprovalView(ActionRequest):
    """A request as `GET /v1/approvals/{id}` shows it."""

    card_error: str | None = Field(
        default=None,
        description="Present while the request's Slack card could not be posted, with why "
        "and the fix (e.g. the bot not invited to the review channel); gone once it posts.",
    )


async def _viewed(rt: Runtime, req: ActionRequest) -> Response:
    """The request, with why its card is not in Slack while it is not."""
    why = (await rt.card_problems([req.id])).get(req.id)
    if not why:
        return _sent(req)
    return _sent(ApprovalView.model_construct(**dict(req), card_error=why))


def _sent(req: ActionRequest, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """The request as JSON, serialised once by pydantic's own encoder: returned as a model,
    FastAPI would validate it again against `response_model` and encode it in Python."""
    return Response(req.model_dump_json(), status, headers, media_type="application/json")


async def create_approval(
    rt: Runtime,
    owners: Ownership,
    body: ApprovalIn,
    request: Request,
    *,
    max_waiting: int = DEFAULT_MAX_WAITING,
) -> Response:
    """`POST /v1/approvals` once its body is valid; `bot.api.fastpath` calls it too."""
    identity = caller(request, body.requester)
    await check_room(rt, identity, body.idempotency_key, max_waiting)
    if body.run_id:  # first: nothing is filed under another identity's run
        await owners.use_run(body.run_id, identity, title=body.run_title)
    made = await create_unless_steered(
        rt.requests,
        rt.steering,
        rt.run_audit,
        rt.policy,
        tool=body.tool,
        args=body.args,
        requester=identity,
        on_behalf_of=body.on_behalf_of,
        run_id=body.run_id,
        channel=body.channel,
        idempotency_key=body.idempotency_key,
        risk=body.risk,
        args_schema=body.args_schema,
        candidates=body.candidates or (),
        # W3C Trace Context: the request's span becomes a child of the caller's
        # (docs/tracing.md); an invalid header is ignored, as the spec says.
        trace=canonical(request.headers.get("traceparent")),
    )
    if isinstance(made, SteeredFirst):
        return steered_response(made)
    req = made.request
    if made.created and may_pass(rt.requests, rt.policy, req):  # inside a live grant?
        req = await pass_if_granted(rt.requests, rt.grants, rt.policy, req)
    where = {"Location": f"/v1/approvals/{req.id}"}
    return _sent(req, 201 if made.created else 200, where)


def router(
    rt: Runtime, owners: Ownership, *, max_wait_s: float, max_waiting: int = DEFAULT_MAX_WAITING
) -> APIRouter:
    r = APIRouter(prefix="/approvals", tags=["approvals"])

    @r.post(
        "",
        status_code=201,
        response_model=ActionRequest,
        summary="Propose a tool call for review",
        openapi_extra={
            "parameters": [
                {
                    "name": "traceparent",
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "W3C Trace Context of the agent's tool-call span: the "
                    "request's span is its child (docs/tracing.md).",
                }
            ]
        },
        responses={
            200: {"model": ActionRequest, "description": "Idempotent retry: the same request"},
            **documented(403, 409, 422, 429),
        },
        description="Refused with 429 `too_many_waiting` while the caller already has "
        "`HITL_MAX_WAITING_PER_IDENTITY` calls waiting for review (default 1000).",
    )
    async def create(body: ApprovalIn, request: Request) -> Response:
        return await create_approval(rt, owners, body, request, max_waiting=max_waiting)

    @r.get(
        "/{request_id}",
        response_model=ApprovalView,
        summary="Read a request; with ?wait, hold until it leaves pending_review",
        responses=documented(404, 422),
    )
    async def get(request: Request, request_id: ItemPath, wait: Wait = None) -> Response:
        identity = caller(request)
        if wait:
            await owners.own_request(request_id, identity, operators=True)
            waiting = execution.wait_request(rt.requests, request_id, min(wait, max_wait_s))
            return await _viewed(rt, await hold(request, waiting))
        return await _viewed(rt, await owners.request(request_id, identity))

    @r.post(
        "/{request_id}/claim",
        response_model=ActionRequest,
        summary="approved -> executing, exactly once (for outside executors)",
        responses=documented(404, 409, 410),
        description="Refused with 409 `forged_decision` (and audited) when the approval is "
        "not signed by this bot's key. The request comes back with its `fence`: hand it to "
        "the action beside the idempotency key and send it with the result. A 503 "
        "(`not_replicated`): do not start; claim again with the same `claim_token`.",
    )
    async def claim(
        request_id: ItemPath, request: Request, body: ClaimIn | None = None
    ) -> Response:
        identity = caller(request)
        await owners.own_request(request_id, identity)
        token = (body or ClaimIn()).claim_token
        claimed = await execution.claim(
            rt.requests, request_id, actor=identity, check=rt.claims, token=token
        )
        return _sent(claimed)

    @r.post(
        "/{request_id}/result",
        response_model=ActionRequest,
        summary="Report how the execution (or its compensation) went",
        responses=documented(404, 409, 410, 422),
        description="Send the claim's `fence`: a report whose claim was superseded since "
        "(lost in a failover, the request claimed again) is refused with 409 `stale_fence` "
        "and audited.",
    )
    async def result(request_id: ItemPath, body: ResultIn, request: Request) -> Response:
        await owners.own_request(request_id, caller(request))
        done = await execution.report(
            rt.requests,
            request_id,
            ok=body.ok,
            detail=body.detail,
            compensated=body.compensated,
            actor=caller(request),
            check=rt.claims,
            fence=body.fence,
        )
        return _sent(done)

    @r.post(
        "/{request_id}/cancel",
        response_model=ActionRequest,
        summary="Withdraw a request that has not started (pending or approved)",
        responses=documented(404, 409, 422),
    )
    async def cancel(
        request_id: ItemPath, request: Request, body: CancelIn | None = None
    ) -> Response:
        reason = (body or CancelIn()).reason
        actor = caller(request)
        await owners.own_request(request_id, actor)
        return _sent(await execution.withdraw(rt.requests, request_id, actor=actor, reason=reason))

    return r
