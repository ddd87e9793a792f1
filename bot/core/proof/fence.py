"""An executor's fencing token: what a claim hands it, and what its report must show.

A claim stores `fence` = "<version it moved the request to>.<claim token>" on the
request. The version alone would not do: a claim lost in a failover (applied on a
primary that died before its replica saw it) and the claim made after it on the
promoted replica both move the request from the same version to the next, so they
would share it. The claim token is the executor's own random choice, one per request
it means to run, so the two claims differ; and the same executor retrying its claim
(a 503 from replicas that did not confirm in time) sends the same token and gets the
same claim back instead of being refused.

A report that carries a fence other than the stored one is refused (`stale_fence`):
the request was claimed again since, and that claim's report is the one that stands.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.errors import StoreUnavailable

T = TypeVar("T")
CLAIM_TRIES = 3  # a claim the store did not confirm is sent again with its token
CLAIM_RETRY_S = 0.5  # times the try number: the replicas' or the failover's time to settle

TOKEN = r"^[A-Za-z0-9_-]{8,64}$"  # what an executor may choose (url-safe, unguessable)
FENCE = r"^[0-9]{1,19}\.[A-Za-z0-9_-]{8,64}$"


def new_claim_token() -> str:
    """A fresh claim token: 96 random bits as 16 url-safe characters."""
    return secrets.token_urlsafe(12)


def fence_of(version: int, token: str) -> str:
    """The fence a claim to `version` with `token` stores (the scripts build it alike)."""
    return f"{version}.{token}"


def token_of(fence: str | None) -> str | None:
    """The claim token inside a fence (None: none, or not a fence)."""
    if not fence or "." not in fence:
        return None
    return fence.split(".", 1)[1] or None


async def claim_retried(claim: Callable[[str], Awaitable[T]], token: str | None = None) -> T:
    """`claim(token)`, sent again with the same token while the store does not confirm it
    (NotReplicated, or out of reach): the same executor then gets its own claim back,
    never a second one. Still unconfirmed after the last try, it raises, and the call
    must not run."""
    token = token or new_claim_token()
    for attempt in range(1, CLAIM_TRIES):
        try:
            return await claim(token)
        except StoreUnavailable:
            await asyncio.sleep(CLAIM_RETRY_S * attempt)
    return await claim(token)
