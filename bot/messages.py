"""Every sentence hitl-bot shows a person, in one place so wording stays consistent."""

from __future__ import annotations

from datetime import UTC, datetime


def when(ms: int | None) -> str:
    """Epoch milliseconds as a time a person reads in a log or a terminal (UTC)."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


ALREADY_RESOLVED = "Already {how} by {by} at {at}; nothing changed."
EXPIRED = "This request expired at {at}; the policy default decides now: {default}."
STALE_PAYLOAD = (
    "The call changed after you looked at it (you saw {seen}, it is now {current}). "
    "Open the latest message and decide again."
)
NOT_ELIGIBLE = "{actor} may not decide this request: {why}."
WHY_REQUESTER = "the requester may not approve their own action"
WHY_NOT_APPROVER = "not among its approvers ({approvers})"
REASON_REQUIRED = "A rejection needs a reason code, one of: {codes}."
EDIT_NOT_ALLOWED = "The policy does not allow editing {tool} before approval."
EDIT_NEEDS_ARGS = "Edit and approve needs the new arguments."
NOT_ALLOWED = "Cannot {event} a request that is {state}."
UNKNOWN_REQUEST = "No request with id {id}."
UNKNOWN_QUESTION = "No question with id {id}."
IDEMPOTENCY_CONFLICT = (
    "Idempotency key {key} was already used for a different call (hash {existing}); "
    "use a new key for a new call."
)
QUESTION_CLOSED = "This question is {state}; it no longer takes answers."
