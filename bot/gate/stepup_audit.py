"""`audit verify`'s check of step-up: on a tier whose policy asks for a passkey, every
person's approval must name a credential (its audit entry's `via: passkey:<id>`), and
that credential must have been enrolled by the person who approved.

The tiers are the policy's in effect: approvals made before a tier asked for a step-up
are named too, and `--since` leaves them out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from bot import messages as msg
from bot.core.models import SYSTEM, AuditEntry
from bot.core.policy import Policy
from bot.core.states import Event
from bot.core.stepup import credential_of
from bot.store.audit import Finding, histories
from bot.store.passkeys import PasskeyStore
from bot.store.requests import RequestStore

APPROVING = frozenset({Event.APPROVE.value, Event.EDIT_AND_APPROVE.value})


async def stepup_findings(
    requests: RequestStore,
    passkeys: PasskeyStore,
    policy: Policy,
    since_ms: int = 0,
    archived: Sequence[dict[str, Any]] = (),
) -> AsyncIterator[Finding]:
    """Every approval on a step-up tier no enrolled passkey of its approver confirmed, in
    the live store and in what retention archived (bot/store/archive.py's records)."""
    tiers = {t.value for t in policy.step_up_tiers()}
    if not tiers:
        return
    async for rid, risk, lines in histories(requests, since_ms, "risk", archived):
        if risk not in tiers:
            continue
        for raw in lines:
            e = AuditEntry.parse(raw)
            if e.kind != "transition" or e.event not in APPROVING or e.actor == SYSTEM:
                continue
            cred = credential_of(e.via)
            if cred is None:
                yield Finding(rid, e.seq, msg.STEP_UP_AUDIT_NONE.format(tier=risk))
            elif await passkeys.owner(cred) != e.actor:
                yield Finding(
                    rid, e.seq, msg.STEP_UP_AUDIT_NOT_THEIRS.format(cred=cred, actor=e.actor)
                )
