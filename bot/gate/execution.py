"""The caller's side of a request, on the store: wait, claim, report, withdraw.

Shared by the HTTP API (`bot.api`), the SDK's direct mode and the corrections a
person sends (`bot.gate.corrections`), so an outside agent gets the same moves
whichever way it talks. It composes the request and question stores.

Waits need no care for the client's socket timeout (redis-py 8 gives every
client 5 s by default): they block in the wait hub's readers, which use
connections of their own with a read timeout past their block.
"""

from __future__ import annotations

from bot.core.models import SYSTEM, ActionRequest, Decision, Question, clip
from bot.core.proof.fence import fence_of, token_of
from bot.core.states import Event, State
from bot.errors import StaleFence
from bot.gate.claims import ClaimCheck, claim_checked
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore


async def wait_request(requests: RequestStore, rid: str, timeout_s: float) -> ActionRequest:
    """The request once it leaves pending_review, or as it stands after `timeout_s`."""
    return await requests.wait(rid, timeout_s)


async def wait_question(questions: QuestionStore, qid: str, timeout_s: float) -> Question:
    """The question once answered, expired or cancelled, or as it stands after `timeout_s`."""
    return await questions.wait(qid, timeout_s)


def _clip(detail: str | None) -> str | None:
    return None if detail is None else clip(detail)


async def claim(
    requests: RequestStore, rid: str, *, actor: str, check: ClaimCheck, token: str | None = None
) -> ActionRequest:
    """approved -> executing, exactly once, and only for a decision serve signed: a second
    claim raises AlreadyResolved, a forged approval ForgedDecision (bot/gate/claims.py).
    The same `token` again: the same claim back (a retry after NotReplicated)."""
    return await claim_checked(requests, rid, actor=actor, check=check, token=token)


async def report(
    requests: RequestStore,
    rid: str,
    *,
    ok: bool,
    detail: str | None,
    compensated: bool | None,
    actor: str,
    check: ClaimCheck,
    executing: bool = False,
    fence: str | None = None,
) -> ActionRequest:
    """Record how an execution (or its compensation) went.

    approved/auto_approved: claimed first, then as executing.
    executing: ok -> completed; not ok -> failed, then rollback_pending when
    `compensated` (a compensating action runs), else manual_intervention.
    rollback_pending: ok -> rolled_back; not ok -> manual_intervention.
    Anything else is refused by the store with the reason (who decided, when).
    `executing`: the caller holds the claim, so the read that finds the state is skipped
    (if a deadline moved it meanwhile, the store refuses the report just the same).
    `fence`: the one the executor's claim handed it; the report of a claim superseded
    since raises StaleFence (audited). Found approved, the request is claimed first with
    the fence's token only if that makes the very claim the fence names: the executor's
    claim was lost in a failover, nobody claimed it since, and the call did run.
    """
    if executing:
        req = None
    else:
        req = await requests.get(rid)
    if req is not None and req.state in (State.APPROVED, State.AUTO_APPROVED):
        token = token_of(fence)
        if fence is None or (token is not None and fence == fence_of(req.version + 1, token)):
            req = await claim(requests, rid, actor=actor, check=check, token=token)
    if req is not None and req.state == State.ROLLBACK_PENDING:
        event = Event.ROLLBACK_OK if ok else Event.ROLLBACK_FAILED
        decision = Decision(event=event, actor=actor, detail=_clip(detail), claim_fence=fence)
    else:
        decision = _outcome(ok=ok, detail=detail, compensated=compensated, actor=actor)
        decision = decision.model_copy(update={"claim_fence": fence})
    return (await requests.transition(rid, decision)).request


def _outcome(*, ok: bool, detail: str | None, compensated: bool | None, actor: str) -> Decision:
    """How an execution went: succeed, or fail (with a compensation to come or not)."""
    return Decision(
        event=Event.SUCCEED if ok else Event.FAIL,
        actor=actor,
        detail=_clip(detail),
        has_compensation=bool(compensated) and not ok,
    )


async def report_executed(
    requests: RequestStore,
    rid: str,
    *,
    ok: bool,
    detail: str | None,
    compensated: bool | None,
    actor: str,
    fence: str | None = None,
    check: ClaimCheck | None = None,
) -> State:
    """`report` for the executor that holds the claim and needs nothing back: the state the
    request moved to, without reading the request (a free call's second round trip).
    Refused for its `fence` and given `check`: `report` with it, which takes the claim
    back if a failover lost it (the call ran) and raises StaleFence otherwise."""
    decision = _outcome(ok=ok, detail=detail, compensated=compensated, actor=actor)
    try:
        return await requests.advance(rid, decision.model_copy(update={"claim_fence": fence}))
    except StaleFence:
        if check is None:
            raise
    done = await report(
        requests,
        rid,
        ok=ok,
        detail=detail,
        compensated=compensated,
        actor=actor,
        check=check,
        fence=fence,
    )
    return done.state


async def withdraw(
    requests: RequestStore,
    rid: str,
    *,
    actor: str = SYSTEM,
    reason: str,
    text: str | None = None,
) -> ActionRequest:
    """Cancel a request that has not started (pending, approved): nobody will run it.
    `reason` is the audited reason code; `actor` who withdrew it (the system, for a stop,
    a correction or a superseded call); `text` what a person wrote, if anyone did."""
    decision = Decision(event=Event.CANCEL, actor=actor, reason_code=reason, text=text)
    return (await requests.transition(rid, decision)).request


async def fail_claimed(
    requests: RequestStore, rid: str, *, detail: str, compensate: bool, fence: str | None
) -> State:
    """The claimed call failed: rollback_pending when a compensation will run, else
    manual_intervention."""
    fail = Decision(event=Event.FAIL, detail=detail, has_compensation=compensate, claim_fence=fence)
    return await requests.advance(rid, fail)


async def report_rollback(
    requests: RequestStore, rid: str, *, ok: bool, detail: str, fence: str | None
) -> State:
    """How the compensation of a failed call went: rolled_back, or a person must look."""
    event = Event.ROLLBACK_OK if ok else Event.ROLLBACK_FAILED
    return await requests.advance(
        rid, Decision(event=event, detail=clip(detail), claim_fence=fence)
    )


async def orphan(requests: RequestStore, rid: str, *, executing: bool, detail: str) -> State:
    """A call whose worker died mid-tool (or mid-undo): never run again; a person
    reconciles it (manual_intervention)."""
    event = Event.FAIL if executing else Event.ROLLBACK_FAILED
    return await requests.advance(rid, Decision(event=event, detail=detail))
