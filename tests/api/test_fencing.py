"""/v1/approvals over HTTP, fenced: the claim answers with `fence`, a claim retried with its
`claim_token` gets the same claim, and a `result` holding a superseded claim's fence is
409 `stale_fence` (audited) while the later claim's result stands."""

from __future__ import annotations

from typing import cast

import httpx
import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.states import Event
from bot.gate.runtime import Runtime
from bot.store import audit, keys
from bot.store.requests import RequestStore

REFUND = {"tool": "refund", "args": {"order": "A1", "amount": 40}}
A, B = "tokenA-1234567", "tokenB-7654321"


async def _approved(client: httpx.AsyncClient, store: RequestStore) -> dict:
    made = (await client.post("/v1/approvals", json=REFUND)).json()
    approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"])
    await store.transition(made["id"], approve)
    return made


async def _claim(client: httpx.AsyncClient, rid: str, token: str) -> httpx.Response:
    return await client.post(f"/v1/approvals/{rid}/claim", json={"claim_token": token})


async def test_a_claim_answers_with_its_fence_and_a_retry_with_its_token_gets_it(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = await _approved(client, runtime.requests)
    first = await _claim(client, made["id"], A)
    assert first.status_code == 200 and first.json()["state"] == "executing"
    assert first.json()["fence"] == f"{first.json()['version']}.{A}"
    again = await _claim(client, made["id"], A)
    assert again.status_code == 200 and again.json() == first.json()
    other = await _claim(client, made["id"], B)
    assert other.status_code == 409 and other.json()["error"] == "already_resolved"
    entries = await audit.entries(runtime.requests.redis, made["id"])
    assert [e.event for e in entries].count("claim") == 1


async def test_a_claim_without_a_body_still_has_a_fence(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    made = await _approved(client, runtime.requests)
    got = (await client.post(f"/v1/approvals/{made['id']}/claim")).json()
    assert got["fence"].startswith(f"{got['version']}.")


async def test_a_result_holding_a_superseded_fence_is_409_stale_fence(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    redis = cast(Redis, runtime.requests.redis)
    made = await _approved(client, runtime.requests)
    rid = made["id"]
    # A failover loses A's claim: the request's keys as they were before it.
    kept = keys.request_keys(rid)
    kept = [kept[keys.REQUEST_KEYS.index(n)] for n in ("req", "audit", "wake")]
    dumps = {k: cast(bytes | None, await redis.dump(k)) for k in kept}
    fence_a = (await _claim(client, rid, A)).json()["fence"]
    for k, raw in dumps.items():  # None: not there before (a wake stream nobody made)
        await (redis.delete(k) if raw is None else redis.restore(k, 0, raw, replace=True))
    fence_b = (await _claim(client, rid, B)).json()["fence"]
    assert fence_a != fence_b

    stale = await client.post(
        f"/v1/approvals/{rid}/result", json={"ok": True, "detail": "A ran it", "fence": fence_a}
    )
    assert stale.status_code == 409
    body = stale.json()
    assert body["error"] == "stale_fence" and body["state"] == "executing"
    assert "claimed again by another executor" in body["detail"]
    ok = await client.post(
        f"/v1/approvals/{rid}/result", json={"ok": True, "detail": "B ran it", "fence": fence_b}
    )
    assert ok.status_code == 200
    assert ok.json()["state"] == "completed" and ok.json()["detail"] == "B ran it"
    late = await client.post(f"/v1/approvals/{rid}/result", json={"ok": False, "fence": fence_a})
    assert late.status_code == 409 and late.json()["error"] == "stale_fence"

    entries = await audit.entries(redis, rid)
    refused = [(e.text, e.fence) for e in entries if e.reason_code == "stale_fence"]
    assert refused == [("A ran it", fence_a), ("", fence_a)]
    assert [e.fence for e in entries if e.event == "claim"] == [fence_b]
    assert await audit.verify_request(redis, rid) is None


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("claim", {"claim_token": "short"}),
        ("claim", {"claim_token": "has space in it"}),
        ("result", {"ok": True, "fence": "no-version"}),
        ("result", {"ok": True, "fence": "3.short"}),
    ],
)
async def test_malformed_tokens_and_fences_are_422(
    client: httpx.AsyncClient, runtime: Runtime, path: str, body: dict
) -> None:
    made = await _approved(client, runtime.requests)
    resp = await client.post(f"/v1/approvals/{made['id']}/{path}", json=body)
    assert resp.status_code == 422 and resp.json()["error"] == "validation_error"
