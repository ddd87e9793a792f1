"""The `/slack/events` endpoint: the signature, then the body's shape, then Bolt.

Bolt parses a body before it checks the signature, and reads what it parsed
as if Slack could send nothing odd, so a stranger's `null` body and a signed
`"event": null` both escaped it as a 500 with a traceback. Here
(`bot.slack.transport.inbound`):

    signature wrong, stale or missing   401 {error: unauthorized}, one short log line
    signed, but not a payload we read   400 {error: bad_request}
    anything else                       Bolt, which checks the signature again

Nothing is parsed before the signature holds, and neither answer reaches a
listener, so neither changes anything. A stranger's body is never logged:
only the method, path, reason and client address.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.errors import ConfigError
from bot.slack.transport import inbound
from bot.slack.transport import messages as tmsg

log = logging.getLogger(__name__)

Endpoint = Callable[[Request], Awaitable[Response]]


def slack_endpoint(
    bolt: AsyncApp, signing_secret: str, *, now: Callable[[], float] = time.time
) -> Endpoint:
    if not signing_secret:
        # Only HTTP mode mounts this endpoint, and it must never verify against "".
        raise ConfigError(tmsg.SLACK_NEEDS_SECRET)
    handler = AsyncSlackRequestHandler(bolt)

    async def endpoint(request: Request) -> Response:
        body = await request.body()
        headers = request.headers
        why = inbound.signature_problem(
            signing_secret,
            body,
            headers.get("x-slack-request-timestamp"),
            headers.get("x-slack-signature"),
            now=now(),
        )
        if why is not None:
            log.warning("slack request refused", extra=_who(request, why))
            return JSONResponse(
                {"error": "unauthorized", "detail": tmsg.SLACK_UNSIGNED}, status_code=401
            )
        try:
            inbound.parse(body, headers.get("content-type"))
        except inbound.Malformed as exc:
            log.info("slack request malformed", extra=_who(request, str(exc)))
            return JSONResponse({"error": "bad_request", "detail": str(exc)}, status_code=400)
        return await handler.handle(request)

    return endpoint


def _who(request: Request, reason: str) -> dict[str, str]:
    client = request.client.host if request.client else "-"
    return {"method": request.method, "path": request.url.path, "reason": reason, "client": client}
