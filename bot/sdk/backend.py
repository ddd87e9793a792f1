"""The small protocol both SDK modes implement: Redis directly, or the HTTP API.

`Gate` holds every rule (deadlines, outcomes, retries of a wait); a backend
only moves data, so the two modes cannot drift apart in behaviour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, Protocol, TypedDict, Unpack

from bot.core.models import ActionRequest, Question, RiskTier, Steering


class NewRequest(TypedDict):
    """A call to put up for review, as the gate has checked it (`bot.core.wire.ApprovalIn`)."""

    tool: str
    args: dict[str, Any]
    requester: str | None  # None over HTTP: the server takes the token's identity
    run_id: str | None
    run_title: str | None
    channel: str | None
    idempotency_key: str | None
    risk: RiskTier | None
    on_behalf_of: str | None
    args_schema: dict[str, Any] | None
    candidates: NotRequired[list[dict[str, Any]]]  # a proposal (bot/core/candidates.py)


class Backend(Protocol):
    async def create(self, **fields: Unpack[NewRequest]) -> ActionRequest: ...

    async def create_claimed(self, **fields: Unpack[NewRequest]) -> tuple[ActionRequest, bool]:
        """`create`; True when the call is claimed by this backend in the same step (a
        call the policy exempts from review, in direct mode)."""
        ...

    async def get(self, rid: str) -> ActionRequest: ...

    async def wait(self, rid: str, timeout_s: float) -> ActionRequest:
        """The request once it leaves pending_review, or as it stands after `timeout_s`."""
        ...

    async def claim(self, rid: str, *, token: str | None = None) -> ActionRequest:
        """approved -> executing with the caller's claim `token` (bot/core/proof/fence.py): the
        request with its `fence`; the same token again gets the same claim back."""
        ...

    async def report(
        self,
        rid: str,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None,
        executing: bool = False,
        fence: str | None = None,
    ) -> ActionRequest: ...

    async def report_executed(
        self,
        rid: str,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None,
        fence: str | None = None,
    ) -> None:
        """`report` with `executing`, when the caller needs nothing back."""

    async def cancel(self, rid: str, *, reason: str) -> ActionRequest: ...

    async def ask(
        self,
        question: str,
        *,
        timeout_s: float,
        run_id: str | None,
        channel: str | None,
        options: Sequence[str] = (),
    ) -> Question: ...

    async def wait_question(self, qid: str, timeout_s: float) -> Question: ...

    async def pop_steering(self, run_id: str) -> Steering | None: ...

    async def aclose(self) -> None: ...
