"""The pure state machine: `apply(request, decision, now)` -> the next request.

No I/O and no clock: the caller passes `now`. The Lua script in
`bot.store.scripts` implements the same guards against the same table, and a
property test runs both on random histories to keep them in step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot import messages as msg
from bot.core.args.payload import canonical_args, payload_hash
from bot.core.candidates import candidate_hashes, shown_hash
from bot.core.deciders import Verdict, who_may_decide
from bot.core.grants import GRANT_REASON
from bot.core.models import SYSTEM, ActionRequest, Decision, Resolution, RiskTier
from bot.core.proof.fence import fence_of, new_claim_token, token_of
from bot.core.states import ALLOWED, FINAL, HUMAN_EVENTS, Event, ReasonCode, State, SystemReason
from bot.errors import (
    AlreadyResolved,
    Expired,
    InvalidTransition,
    NotEligible,
    PayloadError,
    StaleFence,
    StalePayload,
)

E, S = Event, State


@dataclass(frozen=True)
class Record:
    """One audited move inside a step (a step may chain several, e.g. reject then close)."""

    event: Event
    from_state: State
    to_state: State


@dataclass(frozen=True)
class Step:
    request: ActionRequest
    records: tuple[Record, ...] = ()
    repeat: bool = False  # the same person repeated a decision already recorded
    noop: bool = False  # a stale or early timer: nothing to do

    @property
    def changed(self) -> bool:
        return bool(self.records)


@dataclass
class _Draft:
    """Mutable working copy; turned back into a frozen request at the end of a step."""

    req: ActionRequest
    now: int
    records: list[Record] = field(default_factory=list)
    updates: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> State:
        return State(self.updates.get("state", self.req.state))

    def move(self, event: Event, to: State) -> None:
        src = self.state
        if (src, event, to) not in ALLOWED:  # the table is the last word
            raise InvalidTransition(
                msg.NOT_ALLOWED.format(event=event.value, state=src.value),
                state=src.value,
                event=event.value,
            )
        self.records.append(Record(event, src, to))
        self.updates["state"] = to

    def finish(self, expires_in: int | None) -> Step:
        self.updates["version"] = self.req.version + 1
        final = self.state in FINAL
        self.updates["expires_at"] = None if final or expires_in is None else self.now + expires_in
        return Step(self.req.model_copy(update=self.updates), tuple(self.records))


def apply(req: ActionRequest, d: Decision, now: int) -> Step:
    """Apply one decision; raise an `InvalidTransition` subclass if it is refused."""
    if d.event in HUMAN_EVENTS:
        return _human(req, d, now)
    if d.event == E.TIMEOUT:
        return _timeout(req, d, now)
    draft = _Draft(req, now)
    if d.event in _REPORTS:
        _check_fence(req, d)
    if d.event == E.CLAIM:
        if req.state == S.EXECUTING and d.claim_token and token_of(req.fence) == d.claim_token:
            return Step(req, repeat=True)  # the same executor retrying its claim: the same claim
        _require(req, d, {S.APPROVED, S.AUTO_APPROVED})
        if req.expires_at is not None and now >= req.expires_at:  # never run late
            raise Expired(
                msg.EXPIRED.format(at=msg.when(req.expires_at), default=S.CANCELLED.value),
                state=req.state.value,
                event=d.event.value,
            )
        draft.move(E.CLAIM, S.EXECUTING)
        token = d.claim_token or new_claim_token()
        draft.updates["fence"] = fence_of(req.version + 1, token)
        return draft.finish(req.execution_timeout_ms)
    if d.event == E.SUCCEED:
        _require(req, d, {S.EXECUTING})
        draft.updates["detail"] = d.detail
        draft.move(E.SUCCEED, S.COMPLETED)
        return draft.finish(None)
    if d.event == E.FAIL:
        _require(req, d, {S.EXECUTING})
        draft.updates["detail"] = d.detail
        draft.move(E.FAIL, S.FAILED)
        return _after_failure(draft, compensate=d.has_compensation)
    if d.event in (E.ROLLBACK_OK, E.ROLLBACK_FAILED):
        _require(req, d, {S.ROLLBACK_PENDING})
        draft.updates["detail"] = d.detail
        ok = d.event == E.ROLLBACK_OK
        draft.move(d.event, S.ROLLED_BACK if ok else S.MANUAL_INTERVENTION)
        return draft.finish(None)
    if d.event == E.CANCEL:
        _require(req, d, {S.PENDING_REVIEW, S.APPROVED, S.AUTO_APPROVED})
        if req.resolution is None:
            draft.updates["resolution"] = Resolution(
                actor=d.actor, at=now, event=E.CANCEL, reason_code=d.reason_code, text=d.text
            )
        draft.move(E.CANCEL, S.CANCELLED)
        return draft.finish(None)
    raise InvalidTransition(
        msg.NOT_ALLOWED.format(event=d.event.value, state=req.state.value),
        state=req.state.value,
        event=d.event.value,
    )


_REPORTS = frozenset({E.SUCCEED, E.FAIL, E.ROLLBACK_OK, E.ROLLBACK_FAILED})


def _check_fence(req: ActionRequest, d: Decision) -> None:
    """A report holding a claim other than the request's own is refused, whatever the
    state: that claim was superseded, so its executor's word must not stand."""
    if d.claim_fence is not None and d.claim_fence != req.fence:
        raise StaleFence(
            msg.STALE_FENCE.format(id=req.id, given=d.claim_fence),
            state=req.state.value,
            event=d.event.value,
        )


def _require(req: ActionRequest, d: Decision, states: set[State]) -> None:
    if req.state not in states:
        _refuse_resolved(req, d)


# Where a request stands once an executor claimed it: a second claim is told so, not
# only who approved it (which reads as if the claim itself came too late to approve).
_CLAIMED = frozenset(
    {S.EXECUTING, S.COMPLETED, S.FAILED, S.ROLLBACK_PENDING, S.ROLLED_BACK, S.MANUAL_INTERVENTION}
)


def _refuse_resolved(req: ActionRequest, d: Decision) -> None:
    res = req.resolution
    if res is not None and req.state != S.PENDING_REVIEW:
        when = msg.when(res.at)
        text = msg.ALREADY_RESOLVED.format(how=_how(req), by=res.actor, at=when)
        if d.event == E.CLAIM and req.state in _CLAIMED:
            state = req.state.value.replace("_", " ")
            text = msg.ALREADY_CLAIMED.format(state=state, by=res.actor, at=when)
        raise AlreadyResolved(
            text,
            state=req.state.value,
            by=res.actor,
            at=res.at,
            how=_how(req),
        )
    raise InvalidTransition(
        msg.NOT_ALLOWED.format(event=d.event.value, state=req.state.value),
        state=req.state.value,
        event=d.event.value,
    )


def _how(req: ActionRequest) -> str:
    """The resolution in a word a person reads: approved, rejected, auto_rejected..."""
    res = req.resolution
    if res is None:
        return req.state.value
    return {
        E.APPROVE: "approved",
        E.EDIT_AND_APPROVE: "edited and approved",
        E.REJECT: "rejected",
        E.CANCEL: "cancelled",
        E.TIMEOUT: (S.AUTO_REJECTED if req.state == S.AUTO_REJECTED else S.AUTO_APPROVED).value,
    }.get(res.event, req.state.value if req.state in FINAL else str(res.reason_code))


def _is_repeat(req: ActionRequest, d: Decision) -> bool:
    res = req.resolution
    if d.event == E.EDIT_AND_APPROVE and not _same_edit(req, d):
        return False  # a different edit is a new decision, even from an earlier approver
    if d.event in (E.APPROVE, E.EDIT_AND_APPROVE):
        approved_path = res is None or res.event in (E.APPROVE, E.EDIT_AND_APPROVE)
        return approved_path and any(a.actor == d.actor for a in req.approvals)
    return res is not None and res.event == E.REJECT and res.actor == d.actor


def _same_edit(req: ActionRequest, d: Decision) -> bool:
    """The edit's arguments are already the request's (a double-submitted edit)."""
    try:
        return d.new_args is not None and payload_hash(req.tool, d.new_args) == req.payload_hash
    except PayloadError:
        return False


def _check_eligible(req: ActionRequest, d: Decision) -> None:
    verdict = who_may_decide(req, d.actor, d.actor_groups, event=d.event, foreign=d.foreign)
    if verdict == Verdict.MAY:
        return
    shown = tuple(sorted(req.eligible()))
    if verdict == Verdict.OWN:
        raise NotEligible(
            msg.NOT_ELIGIBLE.format(
                actor=d.actor, why=msg.WHY_REQUESTER.format(approvers=", ".join(shown))
            ),
            state=req.state.value,
            event=d.event.value,
            actor=d.actor,
            allowed=shown,
            own=True,
        )
    raise NotEligible(
        msg.NOT_ELIGIBLE.format(
            actor=d.actor, why=msg.WHY_NOT_APPROVER.format(approvers=", ".join(shown))
        ),
        state=req.state.value,
        event=d.event.value,
        actor=d.actor,
        allowed=shown,
    )


def _human(req: ActionRequest, d: Decision, now: int) -> Step:
    if _is_repeat(req, d):
        return Step(req, repeat=True)
    if req.state != S.PENDING_REVIEW:
        _refuse_resolved(req, d)
    if req.expires_at is not None and now >= req.expires_at:
        raise Expired(
            msg.EXPIRED.format(at=msg.when(req.expires_at), default=req.on_exhausted.value),
            state=req.state.value,
            event=d.event.value,
        )
    _check_eligible(req, d)
    if d.payload_hash != shown_hash(req):
        raise StalePayload(
            msg.STALE_PAYLOAD.format(seen=d.payload_hash, current=shown_hash(req)),
            state=req.state.value,
            event=d.event.value,
        )
    draft = _Draft(req, now)
    if d.event == E.REJECT:
        if d.reason_code not in {c.value for c in ReasonCode}:
            raise InvalidTransition(
                msg.REASON_REQUIRED.format(codes=", ".join(c.value for c in ReasonCode)),
                state=req.state.value,
                event=d.event.value,
            )
        draft.updates["resolution"] = Resolution(
            actor=d.actor,
            at=now,
            event=E.REJECT,
            reason_code=d.reason_code,
            text=d.text,
            view_hash=d.view_hash,
        )
        draft.move(E.REJECT, S.REJECTED)
        draft.move(E.CLOSE, S.CANCELLED)
        return draft.finish(None)
    approvals = list(req.approvals)
    if req.candidates:
        approvals = _choose(req, d, draft)
    elif d.event == E.EDIT_AND_APPROVE:
        approvals = _edit(req, d, draft)
    from bot.core.models import Approval  # local: keeps the import list of the hot path short

    approvals.append(Approval(actor=d.actor, at=now))
    draft.updates["approvals"] = tuple(approvals)
    if len(approvals) < req.quorum:
        draft.move(d.event, S.PENDING_REVIEW)
        return draft.finish(req.expires_at - now if req.expires_at is not None else None)
    # An approval under a standing grant names the grant as its reason (bot/core/grants.py).
    grant = d.event == E.APPROVE and str(d.reason_code or "").startswith(GRANT_REASON)
    draft.updates["resolution"] = Resolution(
        actor=d.actor,
        at=now,
        event=d.event,
        reason_code=d.reason_code if grant else None,
        text=d.text,
        view_hash=d.view_hash,
    )
    draft.move(d.event, S.APPROVED)
    return draft.finish(req.claim_timeout_ms)


def _edit(req: ActionRequest, d: Decision, draft: _Draft) -> list[Any]:
    """Swap in the edited arguments; earlier approvals were of the old call, so they lapse."""
    if not req.allow_edit:
        raise InvalidTransition(
            msg.EDIT_NOT_ALLOWED.format(tool=req.tool),
            state=req.state.value,
            event=d.event.value,
        )
    if d.new_args is None:
        raise InvalidTransition(msg.EDIT_NEEDS_ARGS, state=req.state.value, event=d.event.value)
    canonical_args(d.new_args)  # refuses NaN and oversized arguments
    draft.updates["args"] = d.new_args
    draft.updates["payload_hash"] = payload_hash(req.tool, d.new_args)
    draft.updates["original_hash"] = req.original_hash or req.payload_hash
    draft.updates["original_args"] = req.args if req.original_args is None else req.original_args
    return []


def _choose(req: ActionRequest, d: Decision, draft: _Draft) -> list[Any]:
    """A proposal approves only by choosing one of its candidates (an edit to it). The
    same candidate as the earlier choices adds to their count; another starts it again."""
    bad = msg.CHOOSE_A_CANDIDATE if d.event != E.EDIT_AND_APPROVE else msg.NOT_A_CANDIDATE
    if d.event != E.EDIT_AND_APPROVE or d.new_args is None:
        raise InvalidTransition(bad, state=req.state.value, event=d.event.value)
    new_hash = payload_hash(req.tool, d.new_args)
    if new_hash not in candidate_hashes(req.tool, req.candidates):
        raise InvalidTransition(bad, state=req.state.value, event=d.event.value)
    if new_hash == req.payload_hash:
        return list(req.approvals)
    draft.updates["args"] = d.new_args
    draft.updates["payload_hash"] = new_hash
    draft.updates["original_hash"] = req.original_hash or req.payload_hash
    return []


def _timeout(req: ActionRequest, d: Decision, now: int) -> Step:
    stale = d.fence is not None and d.fence != req.version
    early = req.expires_at is None or now < req.expires_at
    if stale or early or req.state in FINAL:
        return Step(req, noop=True)
    draft = _Draft(req, now)
    if req.state == S.PENDING_REVIEW:
        if req.level + 1 < len(req.levels):
            draft.move(E.TIMEOUT, S.ESCALATED)
            draft.move(E.REASSIGN, S.PENDING_REVIEW)
            draft.updates["level"] = req.level + 1
            return draft.finish(req.levels[req.level + 1].timeout_ms)
        default = req.on_exhausted
        if default == S.AUTO_APPROVED and req.risk != RiskTier.LOW:
            default = S.AUTO_REJECTED  # never auto-approve risk, whatever the request says
        draft.updates["resolution"] = Resolution(
            actor=SYSTEM, at=now, event=E.TIMEOUT, reason_code=SystemReason.NO_RESPONSE.value
        )
        draft.move(E.TIMEOUT, default)
        return draft.finish(req.claim_timeout_ms)
    if req.state in (S.APPROVED, S.AUTO_APPROVED):
        draft.move(E.TIMEOUT, S.CANCELLED)
        return draft.finish(None)
    if req.state == S.EXECUTING:
        draft.move(E.TIMEOUT, S.FAILED)
        return _after_failure(draft, compensate=False)  # side effects unknown: a person looks
    draft.move(E.TIMEOUT, S.MANUAL_INTERVENTION)
    return draft.finish(None)


def _after_failure(draft: _Draft, *, compensate: bool) -> Step:
    if compensate:
        draft.move(E.COMPENSATE, S.ROLLBACK_PENDING)
        return draft.finish(draft.req.execution_timeout_ms)
    draft.move(E.GIVE_UP, S.MANUAL_INTERVENTION)
    return draft.finish(None)
