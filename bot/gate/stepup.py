"""Step-up use cases: offer a passkey confirmation instead of approving, and refuse one
(audited on the request). Applying a confirmed approval is `decide` itself, called by
the face that verified the assertion (bot/passkey) with the credential named.

A tier's step-up is read from the policy serve runs, when the person decides.
"""

from __future__ import annotations

import secrets

from bot import messages as msg
from bot.config import Settings
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.stepup import REQUIRED, Binding, expiry
from bot.errors import ConfigError, HitlError
from bot.store.passkeys import PasskeyStore

CONFIRM_PATH = "/passkey/confirm/"
ENROLL_PATH = "/passkey/enroll/"


class StepUpNeeded(HitlError):
    """An approval waits for the approver's passkey: nothing was approved. `url`: their
    confirmation page; None when they have no passkey enrolled yet."""

    def __init__(self, message: str, *, url: str | None, expires_at: int | None) -> None:
        super().__init__(message)
        self.url = url
        self.expires_at = expires_at


def check_public_url(settings: Settings, policy: Policy) -> None:
    """Refuse to serve a policy whose step-up nobody could take: without HITL_PUBLIC_URL
    there is no page to confirm on, and approving without it would drop the step-up."""
    tiers = policy.step_up_tiers()
    if tiers and not settings.hitl_public_url:
        names = ", ".join(t.value for t in tiers)
        raise ConfigError(msg.STEP_UP_NEEDS_PUBLIC_URL.format(tiers=names))


def confirm_url(public_url: str, token: str) -> str:
    return public_url + CONFIRM_PATH + token


def enroll_url(public_url: str, token: str) -> str:
    return public_url + ENROLL_PATH + token


async def offer(
    passkeys: PasskeyStore, req: ActionRequest, d: Decision, approver: str, *, now: int
) -> Binding | None:
    """A confirmation of `d` by `approver` on `req`, its click audited as refused for
    want of a step-up. None: they have no passkey to confirm with (audited the same)."""
    seen = d.payload_hash or ""
    await passkeys.audit_refused(
        req.id, actor=approver, event=d.event.value, code=REQUIRED, seen=seen
    )
    if not await passkeys.of(approver):
        return None
    binding = Binding(
        request_id=req.id,
        version=req.version,
        payload_hash=seen,
        event=d.event,
        approver=approver,
        foreign=d.foreign,
        new_args=d.new_args,
        challenge=secrets.token_urlsafe(32),
        expires_at=expiry(req, now),
    )
    return await passkeys.issue_step_up(binding)


async def refuse(
    passkeys: PasskeyStore, binding: Binding, code: str, *, actor: str = "", via: str = ""
) -> None:
    """Audit a refused confirmation on its request. `actor`: who tried (default: the
    approver the link was for)."""
    await passkeys.audit_refused(
        binding.request_id,
        actor=actor or binding.approver,
        event=binding.event.value,
        code=code,
        seen=binding.payload_hash,
        via=via,
    )
