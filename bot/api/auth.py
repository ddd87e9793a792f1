"""Bearer-token authentication for every `/v1` route, checked before anything else.

It is ASGI middleware rather than a FastAPI dependency so that it runs before
the body is read: a caller without the token learns nothing (not even whether
its JSON parses) and costs us no body read. Without `HITL_API_TOKEN` the API
is closed (503), never open.
"""

from __future__ import annotations

import hmac

from fastapi.security import HTTPBearer
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from bot import messages as bot_msg
from bot.api import messages as msg
from bot.api.errors import error_response
from bot.config import DEFAULT_IDENTITY, HOW_TO_SET
from bot.errors import Forbidden

PREFIX = "/v1"

# Declared on the /v1 routers only so the OpenAPI document shows the scheme;
# the check itself is `BearerAuth`.
bearer_scheme = HTTPBearer(
    auto_error=False,
    description="Authorization: Bearer $HITL_API_TOKEN on every /v1 call.",
)


def _guarded(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def _bearer(scope: Scope) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


def identity_of(scope: Scope) -> str:
    """The agent identity BearerAuth found for this call's token."""
    state: dict[str, object] = scope.get("state") or {}
    return str(state.get("identity") or DEFAULT_IDENTITY)


def caller(request: Request, claimed: str | None = None) -> str:
    """The caller's identity; a body that claims another one is refused, never believed."""
    identity = identity_of(request.scope)
    if claimed is not None and claimed != identity:
        raise Forbidden(bot_msg.REQUESTER_FROM_TOKEN.format(given=claimed, identity=identity))
    return identity


class BearerAuth:
    """`tokens` maps each accepted bearer token to the agent identity it stands for."""

    def __init__(self, app: ASGIApp, *, tokens: dict[str, str]) -> None:
        self.app = app
        self.tokens = [(t.encode(), name) for t, name in tokens.items() if t]  # none: API off

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _guarded(scope["path"]):
            await self.app(scope, receive, send)
            return
        if not self.tokens:
            how = HOW_TO_SET["HITL_API_TOKEN"]
            response = error_response(503, "api_disabled", msg.API_DISABLED.format(how=how))
            await response(scope, receive, send)
            return
        given = _bearer(scope)
        identity = None
        for token, name in self.tokens:  # every one compared, in constant time each
            if given is not None and hmac.compare_digest(given.encode(), token):
                identity = name
        if given is None or identity is None:
            detail = msg.TOKEN_MISSING if given is None else msg.TOKEN_WRONG
            response = error_response(
                401, "unauthorized", detail, headers={"WWW-Authenticate": "Bearer"}
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["identity"] = identity
        await self.app(scope, receive, send)
