"""Hold a long-poll open until its wait ends or the client goes away.

The wait itself is push-based (XREAD BLOCK on the item's wake stream): no
thread and no polling. If the client hangs up first, the wait is cancelled at
once, so an abandoned long-poll does not keep a Redis connection blocked for
the rest of its minute.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

T = TypeVar("T")
CLIENT_GONE = 499  # nginx's "client closed request"; nobody reads it


class ClientGone(Exception):
    """The client disconnected before the wait ended."""


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass  # the (already read) request body, replayed


async def hold(request: Request, wait: Coroutine[Any, Any, T]) -> T:
    work = asyncio.ensure_future(wait)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (work, gone):
            if not task.done():
                task.cancel()
    if work.done() and not work.cancelled():
        return work.result()
    raise ClientGone


async def client_gone(_: Request, __: Exception) -> Response:
    return Response(status_code=CLIENT_GONE)
