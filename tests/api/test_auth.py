"""Every /v1 call needs the bearer token; without HITL_API_TOKEN the API is closed."""

from __future__ import annotations

import httpx
import pytest
from redis.asyncio import Redis

from bot.api import create_app
from bot.core.policy import Policy
from tests.api.live import make_runtime

V1_CALLS = [
    ("POST", "/v1/approvals", {"tool": "refund", "args": {}}),
    ("GET", "/v1/approvals/abc", None),
    ("POST", "/v1/approvals/abc/claim", None),
    ("POST", "/v1/questions", {"question": "?"}),
    ("GET", "/v1/runs/run-1/steering", None),
]


def _client(redis: Redis, policy: Policy, token: str | None) -> httpx.AsyncClient:
    app = create_app(make_runtime(redis, policy, token=token))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


@pytest.mark.parametrize(("method", "path", "body"), V1_CALLS)
async def test_missing_token_is_401(
    redis: Redis, policy: Policy, method: str, path: str, body: object
) -> None:
    async with _client(redis, policy, "s3cret-0123456789") as c:
        resp = await c.request(method, path, json=body)
    assert resp.status_code == 401
    assert resp.json()["error"] == "unauthorized"
    assert "Bearer" in resp.json()["detail"]
    assert resp.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "header",
    [
        "Bearer wrong",
        "Bearer s3cret-012345678",
        "Bearer s3cret-01234567892",
        "Basic s3cret-0123456789",
        "s3cret-0123456789",
        "Bearer",
    ],
)
async def test_wrong_token_is_401(redis: Redis, policy: Policy, header: str) -> None:
    async with _client(redis, policy, "s3cret-0123456789") as c:
        resp = await c.post(
            "/v1/approvals", json={"tool": "refund"}, headers={"Authorization": header}
        )
    assert resp.status_code == 401
    assert resp.json()["error"] == "unauthorized"


async def test_right_token_passes_and_scheme_is_case_insensitive(
    redis: Redis, policy: Policy
) -> None:
    async with _client(redis, policy, "s3cret-0123456789") as c:
        resp = await c.post(
            "/v1/approvals",
            json={"tool": "refund"},
            headers={"Authorization": "bearer s3cret-0123456789"},
        )
    assert resp.status_code == 201


async def test_auth_comes_before_the_body_is_parsed(redis: Redis, policy: Policy) -> None:
    async with _client(redis, policy, "s3cret-0123456789") as c:
        resp = await c.post(
            "/v1/approvals", content=b"{not json", headers={"content-type": "application/json"}
        )
    assert resp.status_code == 401


@pytest.mark.parametrize(("method", "path", "body"), V1_CALLS)
async def test_no_token_configured_closes_the_api(
    redis: Redis, policy: Policy, method: str, path: str, body: object
) -> None:
    async with _client(redis, policy, None) as c:
        resp = await c.request(
            method, path, json=body, headers={"Authorization": "Bearer anything"}
        )
    assert resp.status_code == 503
    assert resp.json()["error"] == "api_disabled"
    assert "HITL_API_TOKEN" in resp.json()["detail"]


async def test_healthz_and_openapi_need_no_token(redis: Redis, policy: Policy) -> None:
    async with _client(redis, policy, None) as c:
        health = await c.get("/healthz")
        spec = await c.get("/openapi.json")
    assert health.status_code == 200 and health.json() == {"ok": True}
    assert spec.status_code == 200
    assert "HTTPBearer" in spec.json()["components"]["securitySchemes"]


async def test_healthz_is_503_when_redis_is_gone(policy: Policy) -> None:
    dead = Redis.from_url("redis://127.0.0.1:1/0", decode_responses=True)
    try:
        async with _client(dead, policy, "s3cret-0123456789") as c:
            resp = await c.get("/healthz")
    finally:
        await dead.aclose()
    assert resp.status_code == 503
    body = resp.json()
    assert body["ok"] is False and body["down"] == ["redis"]
    # It names the part, never the client's error (here "Error 111 connecting to
    # 127.0.0.1:1. Connection refused."): /healthz answers without a token.
    assert "127.0.0.1" not in resp.text and "refused" not in resp.text.lower()
    assert "Error" not in resp.text
