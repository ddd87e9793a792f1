"""The approval lifecycle: states, events and the transition table.

The table is data, not code: `bot.core.machine` picks a row with guards, and
`bot.store.scripts` renders the same rows into the Lua scripts so Redis refuses
exactly what the pure model refuses.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    PENDING_REVIEW = "pending_review"  # waiting for a person; has a deadline and assignees
    APPROVED = "approved"  # quorum met; waiting for the executor to claim it
    AUTO_APPROVED = "auto_approved"  # no person answered and the low-risk default was to approve
    EXECUTING = "executing"  # claimed once by one executor; side effects may be happening
    COMPLETED = "completed"  # the tool ran and reported success (final)
    REJECTED = "rejected"  # a person said no, with a reason code; closes to cancelled at once
    CANCELLED = "cancelled"  # will never run: rejected, run stopped, or never claimed (final)
    ESCALATED = "escalated"  # deadline passed with a level left; reassigned at once
    AUTO_REJECTED = "auto_rejected"  # no person answered and the default was to reject (final)
    FAILED = "failed"  # the tool raised after approval; goes on to rollback or a person
    ROLLBACK_PENDING = "rollback_pending"  # the compensating action is running
    ROLLED_BACK = "rolled_back"  # compensation succeeded (final)
    MANUAL_INTERVENTION = "manual_intervention"  # a person must reconcile by hand (final)


class Event(StrEnum):
    CREATE = "create"  # the request is proposed
    APPROVE = "approve"  # a person approves the payload they saw
    EDIT_AND_APPROVE = "edit_and_approve"  # a person approves changed arguments
    REJECT = "reject"  # a person refuses, with a reason code
    TIMEOUT = "timeout"  # the deadline of the current state passed (system)
    CLAIM = "claim"  # an executor takes the approved call, exactly once
    SUCCEED = "succeed"  # the executor reports success
    FAIL = "fail"  # the executor reports an error
    ROLLBACK_OK = "rollback_ok"  # the compensating action succeeded
    ROLLBACK_FAILED = "rollback_failed"  # the compensating action failed
    CANCEL = "cancel"  # the run was stopped, or an operator withdrew the request
    # Follow-ups the machine chains on its own, in the same atomic step:
    CLOSE = "close"  # rejected -> cancelled
    REASSIGN = "reassign"  # escalated -> pending_review at the next level
    COMPENSATE = "compensate"  # failed -> rollback_pending (a compensating action exists)
    GIVE_UP = "give_up"  # failed -> manual_intervention (none, or side effects unknown)


class ReasonCode(StrEnum):
    """Why a person rejected; a fixed set so rejections can be counted and learned from."""

    WRONG_TARGET = "wrong_target"
    TOO_RISKY = "too_risky"
    NEEDS_INFO = "needs_info"
    POLICY = "policy"
    OTHER = "other"


class SystemReason(StrEnum):
    """Why the bot itself resolved or withdrew a request; never a person's choice, so a
    person's reject may not give one (the scripts accept only `ReasonCode` there)."""

    NO_REVIEW = "no_review"  # the policy exempts the call: approved at creation
    NO_RESPONSE = "no_response"  # the last level's deadline passed: the policy's default
    RUN_STOPPED = "run_stopped"  # the run was stopped while the call waited
    SUPERSEDED = "superseded"  # a person's correction replaced the waiting call
    UNKNOWN_TOOL = "unknown_tool"  # the worker has no tool of that name
    CLAIM_EXPIRED = "claim_expired"  # the approval lapsed before the executor claimed it


FINAL: frozenset[State] = frozenset(
    {
        State.COMPLETED,
        State.CANCELLED,
        State.AUTO_REJECTED,
        State.ROLLED_BACK,
        State.MANUAL_INTERVENTION,
    }
)

# States that only exist for an instant inside one atomic step; never stored as current.
TRANSIENT: frozenset[State] = frozenset({State.REJECTED, State.ESCALATED, State.FAILED})

HUMAN_EVENTS: frozenset[Event] = frozenset({Event.APPROVE, Event.EDIT_AND_APPROVE, Event.REJECT})

S, E = State, Event

# (from, event, to). Several rows with the same (from, event) mean a guard chooses.
TRANSITIONS: tuple[tuple[State, Event, State], ...] = (
    (S.PENDING_REVIEW, E.APPROVE, S.APPROVED),
    (S.PENDING_REVIEW, E.APPROVE, S.PENDING_REVIEW),  # quorum not met yet
    (S.PENDING_REVIEW, E.EDIT_AND_APPROVE, S.APPROVED),
    (S.PENDING_REVIEW, E.EDIT_AND_APPROVE, S.PENDING_REVIEW),  # quorum not met yet
    (S.PENDING_REVIEW, E.REJECT, S.REJECTED),
    (S.REJECTED, E.CLOSE, S.CANCELLED),
    (S.PENDING_REVIEW, E.TIMEOUT, S.ESCALATED),
    (S.ESCALATED, E.REASSIGN, S.PENDING_REVIEW),
    (S.PENDING_REVIEW, E.TIMEOUT, S.AUTO_REJECTED),
    (S.PENDING_REVIEW, E.TIMEOUT, S.AUTO_APPROVED),
    (S.APPROVED, E.CLAIM, S.EXECUTING),
    (S.AUTO_APPROVED, E.CLAIM, S.EXECUTING),
    (S.APPROVED, E.TIMEOUT, S.CANCELLED),  # nobody claimed it in time: never run late
    (S.AUTO_APPROVED, E.TIMEOUT, S.CANCELLED),
    (S.EXECUTING, E.SUCCEED, S.COMPLETED),
    (S.EXECUTING, E.FAIL, S.FAILED),
    (S.EXECUTING, E.TIMEOUT, S.FAILED),  # the executor vanished mid-call
    (S.FAILED, E.COMPENSATE, S.ROLLBACK_PENDING),
    (S.FAILED, E.GIVE_UP, S.MANUAL_INTERVENTION),
    (S.ROLLBACK_PENDING, E.ROLLBACK_OK, S.ROLLED_BACK),
    (S.ROLLBACK_PENDING, E.ROLLBACK_FAILED, S.MANUAL_INTERVENTION),
    (S.ROLLBACK_PENDING, E.TIMEOUT, S.MANUAL_INTERVENTION),
    # Stopping a run withdraws what has not started; running side effects must report.
    (S.PENDING_REVIEW, E.CANCEL, S.CANCELLED),
    (S.APPROVED, E.CANCEL, S.CANCELLED),
    (S.AUTO_APPROVED, E.CANCEL, S.CANCELLED),
)

ALLOWED: frozenset[tuple[State, Event, State]] = frozenset(TRANSITIONS)


def targets(state: State, event: Event) -> frozenset[State]:
    """Every state `event` may lead to from `state` (empty: not allowed)."""
    return frozenset(dst for src, ev, dst in TRANSITIONS if src == state and ev == event)
