"""`POST /v1/approvals` without FastAPI's per-request machinery, for valid bodies only.

An agent's hottest call. FastAPI spends about as much CPU on it (routing through the
nested routers, solving dependencies, its request handler) as the store does creating
the request. This route sits first in the app's routes and claims the call only
when FastAPI's route would reach the endpoint with a valid body: the exact path and
method, `Content-Type: application/json`, and a body that parses (`json.loads`,
as FastAPI's route parses it) and validates as `ApprovalIn`. It then runs the
same `create_approval`, under the same middleware and exception handlers, so the
answer is byte for byte FastAPI's. Anything else (a bad body, another content type,
another method) does not match here and goes to FastAPI's route, which answers it
exactly as before; the OpenAPI document still describes that route alone.

`BodyLimit` has read the whole body before routing; it leaves it in the scope.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Scope

from bot.api.approvals import create_approval
from bot.api.limits import BODY_KEY
from bot.api.ownership import Ownership
from bot.api.schemas import ApprovalIn
from bot.api.waiting import DEFAULT_MAX_WAITING
from bot.gate.runtime import Runtime

PATH = "/v1/approvals"
_VALID = "hitl.approval"  # the validated body, from matches() to the endpoint


def _json_content(scope: Scope) -> bool:
    found = [v for k, v in scope["headers"] if k.lower() == b"content-type"]
    return found == [b"application/json"]


class _Route(Route):
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        # PARTIAL (another method) is FastAPI's route's to answer (405), never ours.
        if match is not Match.FULL or scope.get("root_path") or not _json_content(scope):
            return Match.NONE, {}
        body = scope.get(BODY_KEY)
        if not body:
            return Match.NONE, {}
        try:
            data: Any = json.loads(body)
            valid = ApprovalIn.model_validate(data) if isinstance(data, dict) else None
        except (ValidationError, ValueError, RecursionError):
            valid = None  # the FastAPI route parses it again and answers the error itself
        if valid is None:
            return Match.NONE, {}
        return Match.FULL, {**child, _VALID: valid}


def route(rt: Runtime, owners: Ownership, *, max_waiting: int = DEFAULT_MAX_WAITING) -> Route:
    async def create(request: Request) -> Response:
        valid = request.scope[_VALID]
        return await create_approval(rt, owners, valid, request, max_waiting=max_waiting)

    return _Route(PATH, create, methods=["POST"], include_in_schema=False)
