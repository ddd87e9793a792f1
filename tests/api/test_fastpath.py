"""The fast `POST /v1/approvals` route answers exactly as FastAPI's route does, and
claims only the calls FastAPI's route would take to its endpoint with a valid body."""

from __future__ import annotations

import json
from typing import Any

import httpx
from fastapi import FastAPI
from starlette.routing import Match

from bot.api import fastpath
from bot.api.limits import BODY_KEY

BODY = {"tool": "refund", "args": {"order": "A1", "amount": 40}, "on_behalf_of": "UKAREN"}
FAST = {"Content-Type": "application/json"}
FASTAPI = {"Content-Type": "application/json; charset=utf-8"}  # not claimed by the fast route


def _scope(body: bytes, *, method: str = "POST", content_type: bytes = b"application/json"):
    return {
        "type": "http",
        "method": method,
        "path": fastpath.PATH,
        "root_path": "",
        "headers": [(b"content-type", content_type)],
        BODY_KEY: body,
    }


def _claimed(app: FastAPI, scope: dict[str, Any]) -> bool:
    route = app.router.routes[0]
    assert isinstance(route, fastpath._Route)
    return route.matches(scope)[0] is Match.FULL


def test_the_fast_route_claims_valid_json_bodies_only(app: FastAPI) -> None:
    ok = json.dumps(BODY).encode()
    assert _claimed(app, _scope(ok))
    big = json.dumps({**BODY, "args": {"n": 2**53}}).encode()  # the largest JSON holds exactly
    assert _claimed(app, _scope(big))
    assert not _claimed(app, _scope(ok, method="GET"))
    assert not _claimed(app, _scope(ok, content_type=b"application/json; charset=utf-8"))
    assert not _claimed(app, _scope(ok, content_type=b"text/plain"))
    assert not _claimed(app, {**_scope(ok), "root_path": "/mounted"})
    for bad in (
        b"",
        b"{",
        b"[]",
        b"NaN",
        json.dumps({**BODY, "extra": 1}).encode(),
        json.dumps({**BODY, "tool": ""}).encode(),
        json.dumps({**BODY, "args": {"t": "\ud800"}}).encode(),  # a lone surrogate
        json.dumps({**BODY, "args": {"n": 10**30}}).encode(),  # past what JSON holds exactly
        b"[" * 100_000,  # json.loads recurses: left to FastAPI's route to answer
    ):
        assert not _claimed(app, _scope(bad)), bad[:40]


async def test_both_routes_answer_alike(client: httpx.AsyncClient) -> None:
    """A create through each route, then each one's retry through the other route."""
    body = json.dumps(BODY).encode()
    first: dict[str, httpx.Response] = {}
    for name, headers in (("fast", FAST), ("fastapi", FASTAPI)):
        first[name] = await client.post(
            "/v1/approvals",
            content=json.dumps({**json.loads(body), "idempotency_key": name}).encode(),
            headers=headers,
        )
        assert first[name].status_code == 201, first[name].text
    fast, slow = first["fast"], first["fastapi"]
    assert fast.headers.keys() == slow.headers.keys()
    for name in ("content-type",):
        assert fast.headers[name] == slow.headers[name]
    for name, headers, other in (("fast", FASTAPI, fast), ("fastapi", FAST, slow)):
        again = await client.post(
            "/v1/approvals",
            content=json.dumps({**json.loads(body), "idempotency_key": name}).encode(),
            headers=headers,
        )
        assert again.status_code == 200
        assert again.content == other.content  # byte for byte: the same request
        assert again.headers["location"] == other.headers["location"]


async def test_errors_after_a_valid_body_are_the_exception_handlers_own(
    client: httpx.AsyncClient,
) -> None:
    # valid as a body, refused by the endpoint: another requester than the token's (403),
    # a key reused for another call (409); the same answer through either route
    for body, status, error in (
        ({**BODY, "requester": "someone-else"}, 403, "forbidden"),
        ({**BODY, "idempotency_key": "k", "args": {"other": 1}}, 409, "idempotency_conflict"),
    ):
        await client.post("/v1/approvals", json={**BODY, "idempotency_key": "k"})
        got = [
            await client.post("/v1/approvals", content=json.dumps(body).encode(), headers=h)
            for h in (FAST, FASTAPI)
        ]
        assert [r.status_code for r in got] == [status, status]
        assert got[0].json()["error"] == error
        assert got[0].content == got[1].content
        assert got[0].headers == got[1].headers
