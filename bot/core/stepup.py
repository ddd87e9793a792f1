"""Step-up: an approval on a tier with `step_up: passkey` counts only once the approver
confirmed it with their enrolled passkey, on a page bound to exactly that decision.

Pure: what a confirmation is bound to, how long it lives, and how the credential used
is named in the decision the store records. The WebAuthn ceremony is bot/passkey's.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.core.models import ActionRequest, Decision
from bot.core.states import Event, State

PASSKEY = "passkey"
# How an approval confirmed with a passkey names the credential, as its `via` (every
# audit entry of the approval) and its reason code (the resolution the card reads).
VIA = "passkey:"
LINK_TTL_MS = 10 * 60_000  # an enrollment link, and the longest a confirmation lives
GRACE_MS = 2 * 60_000  # a confirmation outlives the card's deadline by this at most
KEEP_MS = 60 * 60_000  # a used or expired confirmation is remembered this long, to say so
# What a refused step-up is audited as (the audit entry's reason code).
REQUIRED = "step_up_required"  # a click alone: the request stays pending
OTHER_REQUEST = "step_up_other_request"  # an assertion made for another challenge
OTHER_VERSION = "step_up_other_version"  # the request changed since the link
OTHER_PERSON = "step_up_other_person"  # someone else's passkey
REPLAYED = "step_up_replayed"  # a link or assertion used already
EXPIRED = "step_up_expired"
REVOKED = "step_up_revoked"  # a credential removed since, or never enrolled
FAILED = "step_up_failed"  # the authenticator's answer did not verify
APPROVING = frozenset({Event.APPROVE, Event.EDIT_AND_APPROVE})


def via_of(credential_id: str) -> str:
    return VIA + credential_id


def credential_of(reason_code: str | None) -> str | None:
    """The credential an approval was confirmed with, from its reason code or via."""
    if reason_code and reason_code.startswith(VIA):
        return reason_code[len(VIA) :]
    return None


class Binding(BaseModel):
    """One confirmation: the decision it would apply, to what, by whom, until when."""

    model_config = ConfigDict(frozen=True)

    request_id: str
    version: int
    payload_hash: str  # the hash the approver saw
    event: Event
    approver: str
    foreign: bool = False  # from another workspace, as Slack said at the click
    new_args: dict[str, Any] | None = None  # an edit's, or a chosen candidate's
    challenge: str  # urlsafe base64 of the random WebAuthn challenge
    expires_at: int
    token: str = ""

    def decision(self, credential_id: str) -> Decision:
        """The decision a verified assertion applies, naming the credential."""
        return Decision(
            event=self.event,
            payload_hash=self.payload_hash,
            new_args=self.new_args,
            reason_code=via_of(credential_id),
            via=via_of(credential_id),
        )


def needs_step_up(step_up: str | None, d: Decision) -> bool:
    """Whether `d` on a tier with `step_up` waits for a passkey: only an approval does
    (saying no is always safe)."""
    return step_up is not None and d.event in APPROVING


def expiry(req: ActionRequest, now_ms: int) -> int:
    """When a confirmation of `req` issued at `now_ms` stops counting: the card's deadline
    and a little, never more than LINK_TTL_MS from now."""
    deadline = (req.expires_at or now_ms) + GRACE_MS
    return min(now_ms + LINK_TTL_MS, deadline)


def shown_hash(req: ActionRequest) -> str:
    """The hash an approver saw on the card: a proposal's own until a candidate is chosen."""
    return req.original_hash if req.candidates and req.original_hash else req.payload_hash


def may_ask(req: ActionRequest, d: Decision, now_ms: int) -> bool:
    """Whether a confirmation may be offered for `d` on `req` now: it waits for review,
    before its deadline, and the person saw what it holds. Anything else goes to the
    store, which refuses it (and audits why) without approving."""
    live = req.state == State.PENDING_REVIEW and (req.expires_at or 0) > now_ms
    return live and d.payload_hash == shown_hash(req)
