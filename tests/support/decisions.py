"""A person's decision as a test writes it: the one builder, so every test approves the
way a card does (bound to the payload hash the person saw)."""

from __future__ import annotations

from typing import Any

from bot.core.models import ActionRequest, Decision
from bot.core.states import Event


def _hash(seen: ActionRequest | str) -> str:
    return seen if isinstance(seen, str) else seen.payload_hash


def approve(seen: ActionRequest | str, actor: str = "UBOSS", **kw: Any) -> Decision:
    """`actor` approves the call they saw: a request, or its payload hash."""
    return Decision(event=Event.APPROVE, actor=actor, payload_hash=_hash(seen), **kw)


def reject(
    seen: ActionRequest | str, actor: str = "UBOSS", reason_code: str = "too_risky", **kw: Any
) -> Decision:
    """`actor` rejects the call they saw, for `reason_code`."""
    return Decision(
        event=Event.REJECT, actor=actor, payload_hash=_hash(seen), reason_code=reason_code, **kw
    )
