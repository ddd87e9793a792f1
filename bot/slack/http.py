"""The `/slack/events` endpoint: Bolt's handler, plus a clear answer to a body it cannot parse.

Bolt parses the body before it checks the signature, and a body that is not
JSON (or a `payload=` that is not) escapes it as a 500. Here such a request
gets 401 if its signature is wrong, like any forged request, else 400.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot import messages as msg
from bot.errors import ConfigError

Endpoint = Callable[[Request], Awaitable[Response]]


def slack_endpoint(bolt: AsyncApp, signing_secret: str) -> Endpoint:
    if not signing_secret:
        # Only HTTP mode mounts this endpoint, and it must never verify against "".
        raise ConfigError(msg.SLACK_NEEDS_SECRET)
    handler = AsyncSlackRequestHandler(bolt)
    verifier = SignatureVerifier(signing_secret)

    async def endpoint(request: Request) -> Response:
        try:
            return await handler.handle(request)
        except ValueError:  # json.JSONDecodeError, from Bolt's body parsing
            body = await request.body()
            if not verifier.is_valid_request(body, dict(request.headers)):
                return JSONResponse(
                    {"error": "unauthorized", "detail": msg.SLACK_UNSIGNED}, status_code=401
                )
            return JSONResponse(
                {"error": "bad_request", "detail": msg.SLACK_BAD_BODY}, status_code=400
            )

    return endpoint
