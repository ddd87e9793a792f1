"""The one ASGI app `hitl-bot serve` runs: the `/v1` API, `/healthz` and Slack's events.

    create_app(rt)                              the API only
    create_app(rt, slack_handler=handler.handle)  plus POST /slack/events

`slack_handler` is either a Starlette request handler, `async (Request) ->
Response` (pass Bolt's `AsyncSlackRequestHandler(app).handle`), or any ASGI
app `async (scope, receive, send)`; which one is told by its signature (one
required positional parameter or three).

Middleware, outermost first: bearer auth on `/v1` (401/503 before the body is
read), then the body limit (413), then FastAPI with handlers that turn every
error into `{error, detail}`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from fastapi import APIRouter, FastAPI, Security
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bot import messages as msg
from bot.api import approvals, errors, fastpath, questions
from bot.api import keys as key_routes
from bot.api import runs as run_routes
from bot.api.auth import BearerAuth, bearer_scheme
from bot.api.limits import DEFAULT_LIMIT, BodyLimit
from bot.api.ownership import Ownership
from bot.api.schemas import Health
from bot.api.waiting import DEFAULT_MAX_WAITING
from bot.gate.runtime import Runtime
from bot.health import Down
from bot.store.run.runs import RunStore
from bot.supervise import Supervisor

RequestHandler = Callable[[Request], Awaitable[Response]]
SlackHandler = ASGIApp | RequestHandler

MAX_WAIT_S = 60.0  # the longest a long-poll holds; clients loop for longer waits
HEALTH_TIMEOUT_S = 2.0
log = logging.getLogger(__name__)
SLACK_PATH = "/slack/events"


def create_app(
    rt: Runtime,
    *,
    slack_handler: SlackHandler | None = None,
    runs: RunStore | None = None,
    max_wait_s: float = MAX_WAIT_S,
    max_body_bytes: int = DEFAULT_LIMIT,
    max_waiting: int = DEFAULT_MAX_WAITING,
    probes: Sequence[Callable[[], Down | None]] = (),
    tasks: Supervisor | None = None,
) -> FastAPI:
    """Build the app on an open runtime; the caller keeps the runtime open while it serves.

    `probes` are extra health checks for `/healthz`: each returns None when healthy, or
    the part that is down (the Socket Mode link, for one). `tasks`, the process's
    background tasks: one failing for a while makes `/healthz` unhealthy, naming it, and
    `/metrics` counts their restarts.
    """
    app = FastAPI(
        title="hitl-bot",
        version="1",
        summary="A person in the loop of an AI agent: approve, steer, escalate.",
        docs_url=None,
        redoc_url=None,
    )
    errors.install(app)
    run_store = runs or rt.runs

    v1 = APIRouter(
        prefix="/v1",
        dependencies=[Security(bearer_scheme)],  # documents the scheme; BearerAuth enforces it
        responses=errors.documented(400, 401, 413, 422, 503),
    )
    owners = Ownership(rt)
    v1.include_router(approvals.router(rt, owners, max_wait_s=max_wait_s, max_waiting=max_waiting))
    v1.include_router(questions.router(rt, owners, max_wait_s=max_wait_s))
    v1.include_router(run_routes.router(rt, owners, run_store))
    v1.include_router(key_routes.router(rt))
    app.include_router(v1)
    # first: it claims only valid bodies
    app.router.routes.insert(0, fastpath.route(rt, owners, max_waiting=max_waiting))

    @app.get(
        "/healthz",
        response_model=Health,
        tags=["ops"],
        responses={
            503: {
                "model": Health,
                "description": "Redis/Valkey does not answer, Slack's Socket Mode is down, "
                "or a background task keeps failing",
            }
        },
    )
    async def healthz() -> JSONResponse:
        down: list[Down] = []
        try:
            await asyncio.wait_for(rt.ping(), HEALTH_TIMEOUT_S)
        except Exception as exc:  # any failure to answer is "not healthy", never a 500
            # The error's text is for the log only: it can name hosts, paths and keys, and
            # /healthz answers anyone who asks.
            log.warning("healthz: Redis/Valkey does not answer: %s: %s", type(exc).__name__, exc)
            down.append(Down("redis", msg.REDIS_DOWN))
        # Every part at once: with Redis down, which tasks it took with it is news too.
        down += [d for d in (probe() for probe in probes) if d is not None]
        if tasks is not None:
            down += tasks.down()
        if down:
            body = Health(
                ok=False, down=[d.part for d in down], detail="; ".join(d.detail for d in down)
            )
            return JSONResponse(body.model_dump(), status_code=503)
        return JSONResponse(Health(ok=True).model_dump(exclude_none=True))

    @app.get("/metrics", tags=["ops"], response_class=PlainTextResponse)
    async def metrics() -> PlainTextResponse:
        """Prometheus text format: counters are cluster-wide, see bot/store/figures/metrics.py."""
        text = await rt.metrics_text()
        if tasks is not None:
            text += tasks.metrics()
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    if slack_handler is not None:
        app.router.routes.append(
            Route(SLACK_PATH, _endpoint(slack_handler), methods=["POST"], include_in_schema=False)
        )

    app.add_middleware(BodyLimit, limit=max_body_bytes)
    app.add_middleware(BearerAuth, tokens=rt.settings.api_identities())
    return app


class _Asgi:
    """Wraps an ASGI callable so Starlette's `Route` treats it as an app, not a handler."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _endpoint(handler: SlackHandler) -> RequestHandler | _Asgi:
    try:
        params = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: assume ASGI
        return _Asgi(cast(ASGIApp, handler))
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is p.empty]
    if len(required) == 3:
        return _Asgi(cast(ASGIApp, handler))
    if len(required) == 1:
        return cast(RequestHandler, handler)
    raise TypeError(
        "slack_handler must be async (request) -> response, such as "
        "AsyncSlackRequestHandler(app).handle, or an ASGI app async (scope, receive, send)"
    )
