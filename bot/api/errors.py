"""Errors as JSON `{error, detail}` with a fitting status, whatever raised them.

Status codes:

    NotFound               404 not_found
    IdempotencyConflict    409 idempotency_conflict
    AlreadyResolved        409 already_resolved    (+ by, at, how, state)
    StalePayload           409 stale_payload
    StaleFence             409 stale_fence         (a report whose claim was superseded)
    InvalidTransition      409 invalid_transition  (+ state, event)
    Expired                410 expired
    NotEligible            403 not_eligible
    PayloadError           422 payload_error
    TooManyWaiting         429 too_many_waiting    (the identity's waiting calls are at
                                                    HITL_MAX_WAITING_PER_IDENTITY)
    request validation     422 validation_error    (malformed JSON too)
    StoreUnavailable       503 store_unavailable   (also a lost Redis connection, or a
                                                    cluster slot failing over; Retry-After)
    NotReplicated          503 not_replicated      (applied, not yet on HITL_REPLICA_ACKS replicas;
                                                    Retry-After)
    StoreDamaged           500 store_damaged       (part of a record is gone, e.g. the
                                                    review terms a request names)
    a correction first     409 steered             (+ text, actor: nothing was filed; the
                                                    agent's model reads `detail`)
    the run was stopped    409 run_stopped         (+ text, actor of a hard-stop note)
    anything else          500 internal            (never a traceback in the body)

The `error` codes are a contract: `bot.sdk.http` turns them back into the same
exception classes, so the SDK raises alike over HTTP and over Redis.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from bot.api import messages as msg
from bot.api.longpoll import ClientGone, client_gone
from bot.db.failures import STORE_DOWN
from bot.errors import WIRE, AlreadyResolved, HitlError, InvalidTransition
from bot.gate.guarded import SteeredFirst

log = logging.getLogger(__name__)

STATUS: dict[type[HitlError], tuple[int, str]] = WIRE
RETRY_AFTER_S = 1  # a lost connection comes back, a cluster fails over, in seconds


class ErrorBody(BaseModel):
    """Every error response. `state`/`event`/`by`/`at`/`how` only for refused transitions."""

    error: str
    detail: str
    state: str | None = None
    event: str | None = None
    by: str | None = None
    at: int | None = None
    how: str | None = None
    errors: list[dict[str, Any]] | None = None  # validation problems, one per field
    text: str | None = None  # steered, run_stopped: the person's own words
    actor: str | None = None  # steered, run_stopped: who wrote them


def error_response(
    status: int, error: str, detail: str, headers: Mapping[str, str] | None = None, **extra: Any
) -> JSONResponse:
    body = ErrorBody(error=error, detail=detail, **extra)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def steered_response(first: SteeredFirst) -> JSONResponse:
    """A call a person's correction or stop came before: nothing was filed."""
    s = first.correction
    return error_response(
        409,
        "run_stopped" if first.stopped else "steered",
        first.says,
        text=s.text if s else None,
        actor=s.actor if s else None,
    )


def status_of(exc: HitlError) -> tuple[int, str]:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return STATUS[HitlError]


async def _hitl(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HitlError)
    status, code = status_of(exc)
    extra: dict[str, Any] = {}
    if isinstance(exc, InvalidTransition):
        extra = {"state": exc.state or None, "event": exc.event or None}
    if isinstance(exc, AlreadyResolved):
        extra.update(by=exc.by, at=exc.at, how=exc.how)
    if status >= 500:
        log.error("%s: %s", code, exc)
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
    return error_response(status, code, str(exc), headers, **extra)


def _where(loc: tuple[int | str, ...] | list[int | str]) -> str:
    return ".".join(str(x) for x in loc) or "request"


async def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [
        {"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": e["type"]}
        for e in exc.errors()
    ]
    summary = "; ".join(f"{_where(p['loc'])}: {p['msg']}" for p in problems[:10])
    return error_response(
        422, "validation_error", msg.INVALID_BODY.format(problems=summary), errors=problems
    )


async def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    try:
        phrase = HTTPStatus(exc.status_code).phrase
    except ValueError:
        phrase = "error"
    code = phrase.lower().replace(" ", "_").replace("-", "_")
    return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)


async def _store_down(_: Request, exc: Exception) -> JSONResponse:
    log.warning("store unavailable: %s", exc)
    return error_response(
        503,
        "store_unavailable",
        msg.STORE_DOWN.format(error=exc),
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


async def _internal(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return error_response(500, "internal", msg.INTERNAL.format(kind=type(exc).__name__))


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into `{error, detail}`."""
    app.add_exception_handler(HitlError, _hitl)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    for store_down in STORE_DOWN:
        app.add_exception_handler(store_down, _store_down)
    app.add_exception_handler(ClientGone, client_gone)
    app.add_exception_handler(Exception, _internal)


def documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for error statuses, all with the `ErrorBody` schema."""
    out: dict[int | str, dict[str, Any]] = {}
    for s in statuses:
        out[s] = {"model": ErrorBody, "description": HTTPStatus(s).phrase}
    return out
