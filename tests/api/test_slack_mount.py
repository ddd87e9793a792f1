"""POST /slack/events reaches the handler given, ASGI app or request handler, unauthenticated."""

from __future__ import annotations

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from bot.api import create_app
from bot.gate.runtime import Runtime


async def _post(app: object, body: bytes) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        return await c.post("/slack/events", content=body, headers={"x-slack-signature": "v0=1"})


async def test_request_handler(runtime: Runtime) -> None:
    seen: list[bytes] = []

    async def handle(req: Request, addition_context_properties: dict | None = None) -> Response:
        seen.append(await req.body())
        return JSONResponse({"ok": True})

    resp = await _post(create_app(runtime, slack_handler=handle), b"payload=1")
    assert resp.status_code == 200 and resp.json() == {"ok": True}
    assert seen == [b"payload=1"]  # the exact bytes, for the signature check


async def test_asgi_app(runtime: Runtime) -> None:
    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        body = (await receive())["body"]
        await Response(b"asgi:" + body)(scope, receive, send)

    resp = await _post(create_app(runtime, slack_handler=asgi), b"x")
    assert resp.text == "asgi:x"


async def test_not_in_openapi_and_absent_without_handler(runtime: Runtime) -> None:
    app = create_app(runtime)
    assert "/slack/events" not in app.openapi()["paths"]
    assert (await _post(app, b"x")).status_code == 404


def test_a_handler_of_another_shape_is_refused(runtime: Runtime) -> None:
    async def two(a: object, b: object) -> None: ...

    with pytest.raises(TypeError, match="slack_handler"):
        create_app(runtime, slack_handler=two)  # type: ignore[arg-type]
