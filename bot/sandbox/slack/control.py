"""`/_emu/...`: the control API the page and tests use to act as people and to inspect.

    POST   /_emu/post      {user, channel, text, thread_ts?, wait?=true}
                           -> {channel, ts, thread_ts, event_ids, statuses}
    POST   /_emu/click     {user, action_id, channel?, ts?, view_id?, value?, selected?} -> outcome
    POST   /_emu/submit    {user, view_id, values} -> outcome (errors, view_action)
    POST   /_emu/close     {user, view_id} -> outcome
    POST   /_emu/command   {user, channel, command, text?} -> outcome
    POST   /_emu/home      {user, wait?=true} -> {channel, event_ids, statuses}
    GET    /_emu/state     -> the workspace (see snapshot.py)
    POST   /_emu/faults    {status, count?=1, retry_after?, method?}; GET lists; DELETE clears
    POST   /_emu/delays    {seconds, count?=1, method?}: the call takes effect, its answer waits
                           GET -> {delays, held}; DELETE clears (with faults) and answers now
    GET    /_emu/calls     -> {counts, ok_counts, log}; DELETE clears calls and deliveries
    GET    /_emu/deliveries -> [{url, kind, status, latency_ms, retry_num, retry_reason, ...}]
    POST   /_emu/settle    -> waits for background event deliveries
    POST   /_emu/reset     -> a clean workspace (initial users/channels/groups), empty logs
    POST   /_emu/members   {channel, action: invite|remove} -> {channel, is_member}
                           (membership.py: the bot invited to or removed from a channel)
    POST   /_emu/response/{token}   a response_url

An outcome is {status, body, error, errors, view_action, dispatched, trigger_id, view_id}.
Bad requests answer 4xx with {"error": message}.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.sandbox.slack.errors import ControlError

if TYPE_CHECKING:
    from bot.sandbox.slack.emulator import SlackEmulator

Body = dict[str, Any]


async def _body(request: Request) -> Body:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ControlError("the body must be JSON") from e
    if not isinstance(data, dict):
        raise ControlError("the body must be a JSON object")
    return data


def _need(body: Body, *names: str) -> list[str]:
    missing = [n for n in names if not body.get(n)]
    if missing:
        raise ControlError(f"missing {', '.join(missing)}")
    return [str(body[n]) for n in names]


def _opt(body: Body, name: str) -> str | None:
    value = body.get(name)
    return None if value in (None, "") else str(value)


def _guarded(
    handler: Callable[[Request], Awaitable[Any]],
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            result = await handler(request)
        except ControlError as e:
            return JSONResponse({"error": e.message}, status_code=e.status)
        if isinstance(result, Response):
            return result
        return JSONResponse(result.to_json() if hasattr(result, "to_json") else result)

    return endpoint


def control_routes(emu: SlackEmulator) -> list[Route]:  # noqa: C901 - a flat list of small closures
    async def post(request: Request) -> Any:
        body = await _body(request)
        user, channel = _need(body, "user", "channel")
        text = str(body.get("text", ""))
        return await emu.post(
            user,
            channel,
            text,
            _opt(body, "thread_ts"),
            wait=body.get("wait", True),
            broadcast=body.get("broadcast") is True,
            file_name=_opt(body, "file_name"),
        )

    async def click(request: Request) -> Any:
        body = await _body(request)
        user, action_id = _need(body, "user", "action_id")
        return await emu.click(
            user,
            action_id,
            channel=_opt(body, "channel"),
            ts=_opt(body, "ts"),
            view_id=_opt(body, "view_id"),
            value=_opt(body, "value"),
            selected=body.get("selected"),
        )

    async def submit(request: Request) -> Any:
        body = await _body(request)
        user, view_id = _need(body, "user", "view_id")
        values = body.get("values") or {}
        if not isinstance(values, dict):
            raise ControlError("values must be an object")
        return await emu.submit(user, view_id, values)

    async def close(request: Request) -> Any:
        body = await _body(request)
        user, view_id = _need(body, "user", "view_id")
        return await emu.close_view(user, view_id)

    async def command(request: Request) -> Any:
        body = await _body(request)
        user, channel, name = _need(body, "user", "channel", "command")
        return await emu.command(user, channel, name, str(body.get("text", "")))

    async def home(request: Request) -> Any:
        body = await _body(request)
        (user,) = _need(body, "user")
        return await emu.open_home(user, wait=body.get("wait", True))

    async def state(request: Request) -> Any:
        return emu.state()

    async def faults(request: Request) -> Any:
        if request.method == "POST":
            body = await _body(request)
            try:
                status = int(body["status"])
                count = int(body.get("count", 1))
                after = body.get("retry_after")
                retry_after = int(after) if after is not None else None
            except (KeyError, TypeError, ValueError) as e:
                raise ControlError("give status (and count, retry_after as integers)") from e
            emu.add_fault(status, count, retry_after=retry_after, method=_opt(body, "method"))
        elif request.method == "DELETE":
            emu.faults.clear()
        return {"faults": [f.to_json() for f in emu.faults.pending]}

    async def delays(request: Request) -> Any:
        if request.method == "POST":
            body = await _body(request)
            try:
                seconds = float(body["seconds"])
                count = int(body.get("count", 1))
            except (KeyError, TypeError, ValueError) as e:
                raise ControlError("give seconds (and count as an integer)") from e
            emu.add_delay(seconds, count, method=_opt(body, "method"))
        elif request.method == "DELETE":
            emu.faults.clear()
        return {"delays": [d.to_json() for d in emu.faults.delays], "held": emu.faults.held}

    async def calls(request: Request) -> Any:
        if request.method == "DELETE":
            emu.calls.clear()
            emu.deliveries.clear()
        return emu.calls.to_json()

    async def deliveries(request: Request) -> Any:
        return [d.to_json() for d in emu.deliveries]

    async def reset(request: Request) -> Any:
        await emu.reset()
        return {"ok": True}

    async def settle(request: Request) -> Any:
        await emu.settle()
        return {"ok": True}

    async def response_url(request: Request) -> Any:
        raw = await request.body()
        try:
            payload = json.loads(raw) if raw.strip() else None
        except ValueError:
            payload = None
        status, answer = emu.responses.use(request.path_params["token"], payload)
        return JSONResponse(answer, status_code=status)

    return [
        Route("/_emu/post", _guarded(post), methods=["POST"]),
        Route("/_emu/click", _guarded(click), methods=["POST"]),
        Route("/_emu/submit", _guarded(submit), methods=["POST"]),
        Route("/_emu/close", _guarded(close), methods=["POST"]),
        Route("/_emu/command", _guarded(command), methods=["POST"]),
        Route("/_emu/home", _guarded(home), methods=["POST"]),
        Route("/_emu/state", _guarded(state), methods=["GET"]),
        Route("/_emu/faults", _guarded(faults), methods=["GET", "POST", "DELETE"]),
        Route("/_emu/delays", _guarded(delays), methods=["GET", "POST", "DELETE"]),
        Route("/_emu/calls", _guarded(calls), methods=["GET", "DELETE"]),
        Route("/_emu/deliveries", _guarded(deliveries), methods=["GET"]),
        Route("/_emu/settle", _guarded(settle), methods=["POST"]),
        Route("/_emu/reset", _guarded(reset), methods=["POST"]),
        Route("/_emu/response/{token}", _guarded(response_url), methods=["POST"]),
    ]
