"""`/api/<method>`: the Web API front door.

Reads arguments from the query string and from a form-encoded or JSON body (slack_sdk
uses all three), takes the token from `Authorization: Bearer` or a `token` argument,
counts the call, applies any armed fault, checks the token and dispatches; an armed
delay then holds the answer back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.sandbox.slack.api import api_messages, api_views
from bot.sandbox.slack.api.api_common import ApiContext, Args, Handler
from bot.sandbox.slack.api.faults import Call, CallLog, Fault, Faults
from bot.sandbox.slack.api.ratelimits import RateLimits, retry_after_header
from bot.sandbox.slack.api.scopes import TokenScopes
from bot.sandbox.slack.errors import WebApiError

METHODS: dict[str, Handler] = {**api_messages.METHODS, **api_views.METHODS}
_LOGGED_ARGS = ("channel", "user", "users", "ts", "thread_ts", "text", "view_id", "name")


async def read_args(request: Request) -> tuple[Args, str | None]:
    """The call's arguments and its token (None when there is none)."""
    args: Args = dict(request.query_params)
    body = await request.body()
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if body:
        if content_type == "application/json":
            try:
                data: Any = json.loads(body)
            except ValueError as e:
                raise WebApiError("invalid_json") from e
            if not isinstance(data, dict):
                raise WebApiError("invalid_json")
            args.update(data)
        else:
            args.update(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    token = args.pop("token", None)
    authorization = request.headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        token = authorization[7:].strip()
    return args, (str(token) if token else None)


def _fault_response(fault: Fault) -> Response:
    if fault.status == 429:
        return JSONResponse(
            {"ok": False, "error": "ratelimited"},
            status_code=429,
            headers={"Retry-After": str(fault.retry_after or 1)},
        )
    return JSONResponse({"ok": False, "error": "fatal_error"}, status_code=fault.status)


class WebApi:
    def __init__(
        self,
        ctx: ApiContext,
        bot_token: str,
        faults: Faults,
        calls: CallLog,
        open_socket: Callable[[str | None], dict[str, Any]] | None = None,
    ) -> None:
        self.ctx = ctx
        self.scopes = TokenScopes(lambda: ctx.ws, bot_token)
        self.bot_token = bot_token
        self.faults = faults
        self.calls = calls
        # apps.connections.open is the one method that takes the app-level token
        self.open_socket = open_socket
        self.limits: RateLimits | None = None  # Slack's rate limits, when the emulator has them

    def _record(self, method: str, status: int, body: dict[str, Any], args: Args) -> None:
        logged = {k: args[k] for k in _LOGGED_ARGS if k in args}
        error = body.get("error")
        self.calls.record(
            Call(
                method=method,
                http_status=status,
                ok=bool(body.get("ok")),
                error=str(error) if error else None,
                at=self.ctx.ids.clock(),
                args=logged,
            )
        )

    def _dispatch(self, method: str, args: Args, token: str | None) -> dict[str, Any]:
        if method == "apps.connections.open" and self.open_socket is not None:
            return self.open_socket(token)
        if token is None:
            raise WebApiError("not_authed")
        if token != self.bot_token:
            raise WebApiError("invalid_auth")
        handler = METHODS.get(method)
        if handler is None:
            raise WebApiError("unknown_method")
        self.scopes.check(self.ctx.ws, method, args, token)
        return handler(self.ctx, args)

    async def endpoint(self, request: Request) -> Response:
        method = request.path_params["method"]
        args: Args = {}
        try:
            args, token = await read_args(request)
        except WebApiError as e:
            self._record(method, 200, e.body(), args)
            return JSONResponse(e.body())
        fault = self.faults.take(method)
        if fault is not None:
            response = _fault_response(fault)
            self._record(method, fault.status, json.loads(bytes(response.body)), args)
            return response
        if self.limits is not None and (wait := self.limits.check(method, args)) is not None:
            limited = {"ok": False, "error": "ratelimited"}
            self._record(method, 429, limited, args)
            return JSONResponse(limited, 429, {"Retry-After": retry_after_header(wait)})
        try:
            body = self._dispatch(method, args, token)
        except WebApiError as e:
            body = e.body()
        self._record(method, 200, body, args)
        await self.faults.hold(method)  # after the call took effect: only the answer is late
        known = token == self.bot_token  # Slack tells a token its scopes on every answer
        return JSONResponse(body, headers=self.scopes.header(self.bot_token) if known else None)
