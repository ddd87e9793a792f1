"""Request bodies parsed by orjson, with exactly the results and errors of `json.loads`.

FastAPI parses a JSON body with `Request.json()` (the stdlib) before pydantic
validates it; orjson does the same in a fraction of the time. Where the two
differ, the stdlib's answer is the API's contract (error details, `NaN`, lone
surrogates, a BOM, UTF-16, huge numbers), so orjson only answers when it can
answer the same:

- anything orjson refuses is parsed again by `json.loads`, which accepts it or
  raises the very error FastAPI turned into a 422 before;
- orjson turns integers outside 64 bits into floats where `json.loads` keeps
  them exact, so a body with a run of 19 or more digits goes to `json.loads`
  (18 digits always fit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

_LONG_NUMBER = re.compile(rb"\d{19}")


def loads(body: bytes) -> Any:
    """`json.loads(body)`, faster."""
    if _LONG_NUMBER.search(body) is None:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


class _Request(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = loads(await self.body())
        return self._json


class FastJsonRoute(APIRoute):
    """An APIRoute whose handler reads JSON bodies with `loads`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            return await handler(_Request(request.scope, request.receive, request._send))

        return route
