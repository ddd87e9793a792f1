"""The caller's side of a request, on the store: wait, claim, report, withdraw.

Shared by the HTTP API (`bot.api`) and the SDK's direct mode, so an outside
agent gets the same moves whichever way it talks. It only composes the
stores; `report` would sit well in `bot.store` as `RequestStore.report`.

Waits are cut into blocking reads shorter than the Redis client's socket
timeout: redis-py 8 gives every client a 5 s `socket_timeout` by default, and
an `XREAD BLOCK` longer than that fails with TimeoutError instead of waiting.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

from redis.asyncio import Redis, RedisCluster

from bot.core.models import ActionRequest, Decision, Question, QuestionState
from bot.core.states import Event, State
from bot.store.questions import QuestionStore
from bot.store.requests import RequestStore

MAX_DETAIL = 3000  # `Decision.detail`'s limit
UNBOUNDED_BLOCK_S = 3600.0
ASSUMED_SOCKET_TIMEOUT_S = 5.0  # redis-py 8's default when the URL and kwargs name none
T = TypeVar("T")


def block_limit(redis: Redis) -> float:
    """The longest one blocking read may last on this client: under its socket timeout."""
    pool = getattr(redis, "connection_pool", None)
    if pool is not None:
        kw = pool.connection_kwargs
    else:  # a cluster client: every node's connections share the client's kwargs
        kw = cast(RedisCluster, redis).get_default_node().connection_kwargs
    if "socket_timeout" in kw:
        timeout = kw["socket_timeout"]
    else:  # from_url without one: the connection class's default applies
        timeout = kw.get("orig_socket_timeout", ASSUMED_SOCKET_TIMEOUT_S)
    if not timeout:
        return UNBOUNDED_BLOCK_S
    t = float(timeout)
    return max(0.05, min(t * 0.8, t - 0.5))  # room for the reply to arrive after the block


async def _in_steps(
    wait: Callable[[float], Awaitable[T]], done: Callable[[T], bool], step: float, timeout_s: float
) -> T:
    deadline = time.monotonic() + max(0.0, timeout_s)
    while True:
        item = await wait(min(step, max(0.0, deadline - time.monotonic())))
        if done(item) or time.monotonic() >= deadline:
            return item


async def wait_request(requests: RequestStore, rid: str, timeout_s: float) -> ActionRequest:
    """The request once it leaves pending_review, or as it stands after `timeout_s`."""
    return await _in_steps(
        lambda s: requests.wait(rid, s),
        lambda r: r.state != State.PENDING_REVIEW,
        block_limit(requests.redis),
        timeout_s,
    )


async def wait_question(questions: QuestionStore, qid: str, timeout_s: float) -> Question:
    """The question once answered, expired or cancelled, or as it stands after `timeout_s`."""
    return await _in_steps(
        lambda s: questions.wait(qid, s),
        lambda q: q.state != QuestionState.OPEN,
        block_limit(questions.redis),
        timeout_s,
    )


def _clip(detail: str | None) -> str | None:
    return None if detail is None else detail[:MAX_DETAIL]


async def claim(requests: RequestStore, rid: str, *, actor: str) -> ActionRequest:
    """approved -> executing, exactly once; a second claim raises AlreadyResolved."""
    return (await requests.transition(rid, Decision(event=Event.CLAIM, actor=actor))).request


async def report(
    requests: RequestStore,
    rid: str,
    *,
    ok: bool,
    detail: str | None,
    compensated: bool | None,
    actor: str,
) -> ActionRequest:
    """Record how an execution (or its compensation) went.

    approved/auto_approved: claimed first, then as executing.
    executing: ok -> completed; not ok -> failed, then rollback_pending when
    `compensated` (a compensating action runs), else manual_intervention.
    rollback_pending: ok -> rolled_back; not ok -> manual_intervention.
    Anything else is refused by the store with the reason (who decided, when).
    """
    req = await requests.get(rid)
    if req.state in (State.APPROVED, State.AUTO_APPROVED):
        req = await claim(requests, rid, actor=actor)
    if req.state == State.ROLLBACK_PENDING:
        event = Event.ROLLBACK_OK if ok else Event.ROLLBACK_FAILED
        decision = Decision(event=event, actor=actor, detail=_clip(detail))
    else:
        decision = Decision(
            event=Event.SUCCEED if ok else Event.FAIL,
            actor=actor,
            detail=_clip(detail),
            has_compensation=bool(compensated) and not ok,
        )
    return (await requests.transition(rid, decision)).request


async def withdraw(requests: RequestStore, rid: str, *, actor: str, reason: str) -> ActionRequest:
    """Cancel a request that has not started (pending, approved): nobody will run it."""
    decision = Decision(event=Event.CANCEL, actor=actor, reason_code=reason)
    return (await requests.transition(rid, decision)).request
