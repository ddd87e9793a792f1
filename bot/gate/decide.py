"""What settles a pending request: a person's decision (a click, a thread reply, a
digest, the edit dialog, a chosen candidate), and a deadline (the sweeper's, or a
worker's own when it outlives the sweeper). Serve's store seals each one in the script
that writes it (bot/store/requests.py); without serve's key nothing here approves."""

from __future__ import annotations

from bot.core.models import Decision
from bot.core.states import Event
from bot.store.requests import Moved, RequestStore


async def decide(
    requests: RequestStore, rid: str, decision: Decision, *, expect_version: int | None = None
) -> Moved:
    """A person's decision on `rid`. `expect_version`: the version the person saw (a
    card, a dialog); the store refuses it if the request moved since. Who may decide
    is the store's check (bot/core/deciders.py and its Lua twin), not the caller's."""
    return await requests.transition(rid, decision, expect_version=expect_version)


async def expire_due(requests: RequestStore, timers: list[tuple[str, int]]) -> list[Moved | None]:
    """The sweeper's deadlines, `(request id, version)` each: the policy's default or the
    next escalation level. None where the request is gone."""
    return await requests.timeout_many(timers)


async def expire_overdue(requests: RequestStore, rid: str, version: int) -> Moved:
    """A waiting worker's own deadline, fenced to the version it waited on: a stale one
    is a no-op, so the sweeper and the worker never both apply it."""
    return await requests.transition(rid, Decision(event=Event.TIMEOUT, fence=version))
