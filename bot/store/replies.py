"""What the Lua scripts answer first: one name per outcome, shared by the scripts (where
`R.name` is replaced by its value as they are read, bot/store/scripts/common.py) and the
records that read their replies, so a misspelt outcome fails at import, not as a
comparison that is never true."""

from __future__ import annotations

from enum import StrEnum

from bot.core.proof.seal import FORGED


class Reply(StrEnum):
    OK = "ok"
    # A request's transition
    REPEAT = "repeat"  # the same person's same decision, already recorded
    NOOP = "noop"  # a stale timer or an undo of nothing: nothing changed
    MOVED = "moved"  # the version the caller read is gone (a sealed decision signs again)
    UNSIGNED = "unsigned"  # a default left to serve's sweeper: only its key may apply it
    NOT_FOUND = "not_found"
    EXPIRED = "expired"
    ALREADY_RESOLVED = "already_resolved"
    INVALID = "invalid"  # the machine refuses this event in this state
    NOT_ELIGIBLE = "not_eligible"
    STALE_FENCE = "stale_fence"
    STALE_PAYLOAD = "stale_payload"
    FORGED_DECISION = FORGED
    # A create
    STEERED = "steered"  # the run's correction or stop came first
    EXISTS = "exists"  # the same call under its idempotency key
    CONFLICT = "conflict"  # another call under that key
    # A grant's use and revocation
    AGAIN = "again"  # this request already used the grant
    ALREADY = "already"  # revoked before
    GONE = "gone"
    REVOKED = "revoked"
    USED_UP = "used_up"
    # A question's answer
    NOT_AN_OPTION = "not_an_option"
