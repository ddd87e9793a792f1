"""Over real HTTP: a claim takes only decisions serve signed; `GET /v1/keys` names the key."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import httpx
import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.proof.seal import FORGED
from bot.core.states import Event
from bot.store import audit
from bot.store.requests import RequestStore
from tests.api.conftest import AUTH
from tests.api.live import LiveServer
from tests.support.keys import other_signer, serve_signer

REFUND = {"tool": "refund", "args": {"order": "A7", "amount": 40}}


async def _approved_by(store: RequestStore, c: httpx.AsyncClient) -> str:
    made = (await c.post("/v1/approvals", json=REFUND)).json()
    approve = Decision(event=Event.APPROVE, actor="UBOSS", payload_hash=made["payload_hash"])
    await store.transition(made["id"], approve)
    return str(made["id"])


async def test_a_forged_approval_is_refused_with_409_and_audited(
    live: LiveServer, redis: Redis
) -> None:
    forger = RequestStore(redis)  # the project's own API, without serve's key
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH) as c:
        rid = await _approved_by(forger, c)
        assert (await c.get(f"/v1/approvals/{rid}")).json()["state"] == "approved"
        resp = await c.post(f"/v1/approvals/{rid}/claim")
        assert resp.status_code == 409, resp.text
        assert resp.json()["error"] == "forged_decision"
        assert "UBOSS" in resp.json()["detail"]
        # nor does reporting a result claim it on the way
        result = await c.post(f"/v1/approvals/{rid}/result", json={"ok": True})
        assert result.json()["error"] == "forged_decision"
        assert (await c.get(f"/v1/approvals/{rid}")).json()["state"] == "approved"
    refusals = [e for e in await audit.entries(redis, rid) if e.kind == "refused"]
    assert [e.reason_code for e in refusals] == ["forged_decision", "forged_decision"]


async def test_another_keys_approval_is_refused_and_serves_own_is_claimed(
    live: LiveServer, redis: Redis
) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH) as c:
        foreign = await _approved_by(RequestStore(redis, signer=other_signer()), c)
        assert (await c.post(f"/v1/approvals/{foreign}/claim")).status_code == 409
        real = await _approved_by(RequestStore(redis, signer=serve_signer()), c)
        claimed = await c.post(f"/v1/approvals/{real}/claim")
        assert claimed.status_code == 200 and claimed.json()["state"] == "executing"


async def test_claims_racing_for_signed_approvals_lose_as_already_resolved_never_forged(
    live: LiveServer, redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Eight executors claim each of ten approvals serve signed, all at once: one 200 per
    request, every other answer 409 `already_resolved`, and no forgery logged or audited
    (an operator is paged on `forged_decision`)."""
    serve = RequestStore(redis, signer=serve_signer())
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        rids = [await _approved_by(serve, c) for _ in range(10)]
        with caplog.at_level(logging.INFO, logger="bot.store"):
            answers = await asyncio.gather(
                *(c.post(f"/v1/approvals/{rid}/claim") for _ in range(8) for rid in rids)
            )
    said = Counter((r.status_code, r.json().get("error")) for r in answers)
    assert said == {(200, None): 10, (409, "already_resolved"): 70}, said
    alarms = [r for r in caplog.records if FORGED in (r.getMessage(), getattr(r, "reason", ""))]
    assert alarms == []
    for rid in rids:
        assert [e.kind for e in await audit.entries(redis, rid)] == ["transition"] * 3


async def test_keys_names_the_key_serve_signs_with(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH) as c:
        body = (await c.get("/v1/keys")).json()
    me = serve_signer()
    assert body["signing"] == me.key_id
    assert [(k["id"], k["public_key"]) for k in body["keys"]] == [(me.key_id, me.public_b64())]
    assert body["keys"][0]["pem"].startswith("-----BEGIN PUBLIC KEY-----")
