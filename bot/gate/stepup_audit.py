"""`audit verify`'s check of step-up: on a tier whose policy asks for a passkey, every
person's approval must name a credential (its audit entry's `via: passkey:<id>`), and
that credential must have been enrolled by the person who approved.

The tiers are the policy's in effect: approvals made before a tier asked for a step-up
are named too, and `--since` leaves them out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from bot import messages as msg
from bot.core.models import SYSTEM, AuditEntry
from bot.core.policy import Policy
from bot.core.states import Event
from bot.core.stepup import credential_of
from bot.errors import NotFound
from bot.store.audit import Finding
from bot.store.passkeys import PasskeyStore
from bot.store.requests import RequestStore

APPROVING = frozenset({Event.APPROVE.value, Event.EDIT_AND_APPROVE.value})


# An archived request: its id, its tier, its audit lines.
Archived = tuple[str, str, list[str]]


async def _live(requests: RequestStore, since_ms: int) -> AsyncIterator[Archived]:
    for rid in await requests.ids_between(since_ms):
        try:
            req, lines = await requests.with_audit(rid)
        except NotFound:
            continue
        yield rid, req.risk.value, lines


async def stepup_findings(
    requests: RequestStore,
    passkeys: PasskeyStore,
    policy: Policy,
    since_ms: int = 0,
    archived: Iterable[Archived] = (),
) -> AsyncIterator[Finding]:
    tiers = {t.value for t in policy.step_up_tiers()}
    if not tiers:
        return
    old = list(archived)

    async def both() -> AsyncIterator[Archived]:
        for item in old:
            yield item
        async for item in _live(requests, since_ms):
            yield item

    async for rid, risk, lines in both():
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
