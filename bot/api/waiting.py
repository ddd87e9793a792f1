"""The bound on how many calls one identity may leave waiting for a person.

One agent's backlog costs every reviewer's digest and the shared notifier: past
`HITL_MAX_WAITING_PER_IDENTITY` waiting calls, a filing is refused with 429 until some
are decided. Checked at the one seam every API filing passes (`create_approval`, which
the fast path calls too), so the SDK's HTTP mode, the MCP gate and Claude Code's hook
get it as well. An idempotent retry of a call already filed is never refused.
"""

from __future__ import annotations

from bot.api import messages as msg
from bot.core.ids import keyed_request_id
from bot.errors import NotFound, TooManyWaiting
from bot.gate.runtime import Runtime

DEFAULT_MAX_WAITING = 1000
SETTING = "HITL_MAX_WAITING_PER_IDENTITY"


async def check_room(rt: Runtime, identity: str, idempotency_key: str | None, limit: int) -> None:
    """Raise TooManyWaiting when `identity` already has `limit` calls waiting. Calls
    filed at the same moment may each pass at `limit - 1`: the bound is that close."""
    if await rt.waiting_of(identity) < limit:
        return
    if idempotency_key:
        try:
            await rt.requests.get(keyed_request_id(idempotency_key, identity))
            return  # a retry of a call already filed: answered as before, not refused
        except NotFound:
            pass
    raise TooManyWaiting(msg.TOO_MANY_WAITING.format(who=identity, n=limit, setting=SETTING))
