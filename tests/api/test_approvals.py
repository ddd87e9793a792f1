"""/v1/approvals: idempotent create, claim once, results down every path, JSON errors."""

from __future__ import annotations

import httpx
import pytest

from bot.core.models import Decision
from bot.core.states import Event, State
from bot.errors import AlreadyResolved
from bot.gate.runtime import Runtime
from bot.store.requests import RequestStore

REFUND = {"tool": "refund", "args": {"order": "A1", "amount": 40}, "on_behalf_of": "UKAREN"}


async def _approved(client: httpx.AsyncClient, store: RequestStore, **extra: object) -> dict:
    made = (await client.post("/v1/approvals", json={**REFUND, **extra})).json()
    await store.transition(
        made["id"],
        Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
    )
    return made


async def test_create_returns_the_request(client: httpx.AsyncClient) -> None:
    resp = await client.post("/v1/approvals", json={**REFUND, "run_id": "run-1", "risk": "high"})
    assert resp.status_code == 201
    body = resp.json()
    assert body["state"] == "pending_review"
    assert body["risk"] == "high"  # raised by the caller
    assert body["args"] == REFUND["args"]
    # the requester is the token's identity; the body only names whom the agent acts for
    assert body["requester"] == "api" and body["on_behalf_of"] == "UKAREN"
    assert body["run_id"] == "run-1"
    assert len(body["payload_hash"]) == 64 and body["expires_at"] > body["created_at"]
    assert body["level"] == 0 and body["approvals"] == [] and body["resolution"] is None
    assert resp.headers["location"] == f"/v1/approvals/{body['id']}"


async def test_same_idempotency_key_and_payload_is_200_and_same_request(
    client: httpx.AsyncClient,
) -> None:
    first = await client.post("/v1/approvals", json={**REFUND, "idempotency_key": "tc-1"})
    again = await client.post("/v1/approvals", json={**REFUND, "idempotency_key": "tc-1"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert again.json()["version"] == first.json()["version"]


async def test_same_key_other_payload_is_409(client: httpx.AsyncClient) -> None:
    await client.post("/v1/approvals", json={**REFUND, "idempotency_key": "tc-2"})
    other = {**REFUND, "args": {"order": "A1", "amount": 4000}, "idempotency_key": "tc-2"}
    resp = await client.post("/v1/approvals", json=other)
    assert resp.status_code == 409
    assert resp.json()["error"] == "idempotency_conflict"


async def test_exempt_tool_is_created_approved(client: httpx.AsyncClient) -> None:
    resp = await client.post("/v1/approvals", json={"tool": "move_claw", "args": {"x": 1}})
    assert resp.status_code == 201 and resp.json()["state"] == "approved"


async def test_get_and_unknown_id(client: httpx.AsyncClient) -> None:
    made = (await client.post("/v1/approvals", json=REFUND)).json()
    got = await client.get(f"/v1/approvals/{made['id']}")
    assert got.status_code == 200 and got.json() == made
    missing = await client.get("/v1/approvals/nope123")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


async def test_claim_once_then_409_naming_who(client: httpx.AsyncClient, runtime: Runtime) -> None:
    made = await _approved(client, runtime.requests)
    first = await client.post(f"/v1/approvals/{made['id']}/claim")
    second = await client.post(f"/v1/approvals/{made['id']}/claim")
    assert first.status_code == 200 and first.json()["state"] == "executing"
    assert second.status_code == 409
    body = second.json()
    assert body["error"] == "already_resolved"
    assert body["by"] == "UBOSS" and body["how"] == "approved" and body["state"] == "executing"
    assert "UBOSS" in body["detail"]


async def test_claim_while_pending_is_409(client: httpx.AsyncClient) -> None:
    made = (await client.post("/v1/approvals", json=REFUND)).json()
    resp = await client.post(f"/v1/approvals/{made['id']}/claim")
    assert resp.status_code == 409 and resp.json()["error"] == "invalid_transition"


async def test_claim_after_the_claim_deadline_is_410(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = await _approved(client, runtime.requests)
    runtime.requests.clock = lambda: made["created_at"] + 86_400_000  # the claim window passed
    resp = await client.post(f"/v1/approvals/{made['id']}/claim")
    assert resp.status_code == 410 and resp.json()["error"] == "expired"


async def test_result_ok_claims_first_and_completes(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = await _approved(client, runtime.requests)
    resp = await client.post(
        f"/v1/approvals/{made['id']}/result", json={"ok": True, "detail": "refunded"}
    )
    assert resp.status_code == 200
    assert resp.json()["state"] == "completed" and resp.json()["detail"] == "refunded"
    again = await client.post(f"/v1/approvals/{made['id']}/result", json={"ok": True})
    assert again.status_code == 409


async def test_failure_with_compensation_goes_down_the_rollback_path(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = await _approved(client, runtime.requests)
    await client.post(f"/v1/approvals/{made['id']}/claim")
    failed = await client.post(
        f"/v1/approvals/{made['id']}/result",
        json={"ok": False, "detail": "bank said 500", "compensated": True},
    )
    assert failed.json()["state"] == "rollback_pending"
    undone = await client.post(
        f"/v1/approvals/{made['id']}/result", json={"ok": True, "detail": "reversed"}
    )
    assert undone.json()["state"] == "rolled_back"


@pytest.mark.parametrize("compensated", [False, None])
async def test_failure_without_compensation_needs_a_person(
    client: httpx.AsyncClient, runtime: Runtime, compensated: bool | None
) -> None:
    made = await _approved(client, runtime.requests)
    resp = await client.post(
        f"/v1/approvals/{made['id']}/result",
        json={"ok": False, "detail": "boom", "compensated": compensated},
    )
    assert resp.json()["state"] == "manual_intervention"


async def test_failed_compensation_needs_a_person(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = await _approved(client, runtime.requests)
    await client.post(f"/v1/approvals/{made['id']}/result", json={"ok": False, "compensated": True})
    resp = await client.post(f"/v1/approvals/{made['id']}/result", json={"ok": False})
    assert resp.json()["state"] == "manual_intervention"


async def test_result_on_a_pending_request_is_409(client: httpx.AsyncClient) -> None:
    made = (await client.post("/v1/approvals", json=REFUND)).json()
    resp = await client.post(f"/v1/approvals/{made['id']}/result", json={"ok": True})
    assert resp.status_code == 409


async def test_cancel_withdraws_and_a_late_approval_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = (await client.post("/v1/approvals", json=REFUND)).json()
    resp = await client.post(f"/v1/approvals/{made['id']}/cancel", json={"reason": "caller_gone"})
    assert resp.status_code == 200 and resp.json()["state"] == "cancelled"
    assert resp.json()["resolution"]["reason_code"] == "caller_gone"
    with pytest.raises(AlreadyResolved, match="cancelled"):
        await runtime.requests.transition(
            made["id"],
            Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"]),
        )
    assert (await runtime.requests.get(made["id"])).state == State.CANCELLED


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"args": {}}, "tool"),
        ({"tool": "", "args": {}}, "tool"),
        ({"tool": "x" * 129}, "tool"),
        ({"tool": "rm -rf"}, "tool"),
        ({"tool": "refund", "args": []}, "args"),
        ({"tool": "refund", "risk": "apocalyptic"}, "risk"),
        ({"tool": "refund", "idempotencyKey": "k"}, "idempotencyKey"),
        ({"tool": "refund", "on_behalf_of": "a\nb"}, "on_behalf_of"),
    ],
)
async def test_invalid_bodies_are_422(client: httpx.AsyncClient, body: dict, field: str) -> None:
    resp = await client.post("/v1/approvals", json=body)
    assert resp.status_code == 422
    assert resp.json()["error"] == "validation_error"
    assert field in resp.json()["detail"]


@pytest.mark.parametrize(
    "raw", [b"{bad", b"", b"[1, 2]", b"null", b'"x"', b"\xff\xfe", b"[" * 5000 + b"]" * 5000]
)
async def test_malformed_json_is_4xx_json_never_500(client: httpx.AsyncClient, raw: bytes) -> None:
    resp = await client.post(
        "/v1/approvals", content=raw, headers={"content-type": "application/json"}
    )
    assert resp.status_code in (400, 422)
    assert set(resp.json()) >= {"error", "detail"}


async def test_nan_and_oversized_args_are_422_payload_error(client: httpx.AsyncClient) -> None:
    nan = await client.post(
        "/v1/approvals",
        content=b'{"tool": "refund", "args": {"x": NaN}}',
        headers={"content-type": "application/json"},
    )
    assert nan.status_code == 422 and nan.json()["error"] == "payload_error"
    big = await client.post("/v1/approvals", json={"tool": "refund", "args": {"x": "a" * 70_000}})
    assert big.status_code == 422 and big.json()["error"] == "payload_error"


async def test_body_over_256_kib_is_413(client: httpx.AsyncClient) -> None:
    resp = await client.post("/v1/approvals", json={"tool": "refund", "args": {"x": "a" * 300_000}})
    assert resp.status_code == 413 and resp.json()["error"] == "body_too_large"


async def test_chunked_body_over_the_limit_is_413(client: httpx.AsyncClient) -> None:
    async def chunks():  # no Content-Length: the limit must count bytes
        for _ in range(40):
            yield b"a" * 10_000

    resp = await client.post(
        "/v1/approvals", content=chunks(), headers={"content-type": "application/json"}
    )
    assert resp.status_code == 413


async def test_unknown_route_and_method_are_json(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/nothing")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = await client.delete("/v1/approvals")
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"


async def test_wait_must_be_a_finite_non_negative_number(client: httpx.AsyncClient) -> None:
    made = (await client.post("/v1/approvals", json=REFUND)).json()
    for bad in ("-1", "nan", "inf", "soon"):
        resp = await client.get(f"/v1/approvals/{made['id']}", params={"wait": bad})
        assert resp.status_code == 422, bad
