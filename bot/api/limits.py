"""Refuse request bodies over a size limit with 413, before any handler reads them.

The body is read here (at most `limit` bytes) and replayed to the app, so the
limit holds for chunked uploads that send no Content-Length, and the same
bytes reach the Slack handler for its signature check.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.api import messages as msg
from bot.api.errors import error_response

DEFAULT_LIMIT = 256 * 1024
BODY_KEY = "hitl.body"  # the whole body, in the scope for bot.api.fastpath


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimit:
    def __init__(self, app: ASGIApp, *, limit: int = DEFAULT_LIMIT) -> None:
        self.app = app
        self.limit = limit

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = msg.BODY_TOO_LARGE.format(limit=self.limit)
        response = error_response(413, "body_too_large", detail)
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.limit:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left before sending it all
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        scope[BODY_KEY] = body
        await self.app(scope, _replay(body, receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: wait for the disconnect, as servers do

    return replay
