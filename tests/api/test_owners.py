"""Two agents on one bot, over real HTTP: neither can see or touch the other's work.

`agent-a` and `agent-b` each have a token; `ops` is an API operator. Another
identity's work answers exactly as an id that does not exist would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.core.models import Decision
from bot.core.policy import parse_policy
from bot.core.states import Event
from bot.store.requests import RequestStore
from tests.api.live import LiveServer, live_server
from tests.conftest import QUORUM_POLICY
from tests.support.keys import serve_signer

TOKENS = {
    "agent-a": "token-of-agent-a-1f9c2d",
    "agent-b": "token-of-agent-b-7e4a0b",
    "ops": "token-of-ops-console-3c8d",
}
REFUND = {"tool": "refund", "args": {"amount": 40}}


@pytest.fixture(scope="module")
def server(redis_url: str) -> Iterator[LiveServer]:
    identities = ",".join(f"{name}={token}" for name, token in TOKENS.items())
    with live_server(
        redis_url, parse_policy(QUORUM_POLICY), identities=identities, operators="ops"
    ) as s:
        yield s


class Agents:
    def __init__(self, clients: dict[str, httpx.AsyncClient]) -> None:
        self.a, self.b, self.ops = clients["agent-a"], clients["agent-b"], clients["ops"]


@pytest.fixture
async def agents(server: LiveServer, redis: Redis) -> AsyncIterator[Agents]:
    clients = {
        name: httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        for name, token in TOKENS.items()
    }
    try:
        yield Agents(clients)
    finally:
        for c in clients.values():
            await c.aclose()


def _as_unknown(resp: httpx.Response, real_id: str, unknown: httpx.Response, fake_id: str) -> bool:
    """`resp` (for a real id) reads exactly as `unknown` (for an id nobody made)."""
    body = resp.json()
    return (
        resp.status_code == unknown.status_code == 404
        and body == {**unknown.json(), "detail": unknown.json()["detail"].replace(fake_id, real_id)}
        and set(resp.headers) - {"date"} == set(unknown.headers) - {"date"}
    )


async def _approve(redis: Redis, rid: str) -> None:
    # decided as serve decides: signed, so the owner's claim may run it
    store = RequestStore(redis, signer=serve_signer())
    req = await store.get(rid)
    decision = Decision(event=Event.APPROVE, actor="UALICE", payload_hash=req.payload_hash)
    await store.transition(rid, decision)


async def test_another_identity_gets_404_on_every_approval_route(
    agents: Agents, redis: Redis
) -> None:
    made = await agents.a.post("/v1/approvals", json=REFUND)
    assert made.status_code == 201 and made.json()["owner"] == "agent-a"
    rid = made.json()["id"]
    fake = "r0nobody0made0it"
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/v1/approvals/{}", {}),
        ("GET", "/v1/approvals/{}?wait=0.2", {}),
        ("POST", "/v1/approvals/{}/claim", {}),
        ("POST", "/v1/approvals/{}/result", {"json": {"ok": True}}),
        ("POST", "/v1/approvals/{}/cancel", {"json": {"reason": "mine_now"}}),
    ]
    for method, path, kw in calls:
        theirs = await agents.b.request(method, path.format(rid), **kw)
        unknown = await agents.b.request(method, path.format(fake), **kw)
        assert _as_unknown(theirs, rid, unknown, fake), (path, theirs.text, unknown.text)
    # Nothing agent-b did touched it: agent-a's own calls work.
    mine = await agents.a.get(f"/v1/approvals/{rid}")
    assert mine.status_code == 200 and mine.json()["state"] == "pending_review"
    assert mine.json()["args"] == {"amount": 40}
    await _approve(redis, rid)
    assert (await agents.b.post(f"/v1/approvals/{rid}/claim")).status_code == 404
    waited = await agents.a.get(f"/v1/approvals/{rid}", params={"wait": 1})
    assert waited.json()["state"] == "approved"
    claimed = await agents.a.post(f"/v1/approvals/{rid}/claim")
    assert claimed.status_code == 200 and claimed.json()["state"] == "executing"
    assert (
        await agents.b.post(f"/v1/approvals/{rid}/result", json={"ok": True})
    ).status_code == 404
    done = await agents.a.post(f"/v1/approvals/{rid}/result", json={"ok": True})
    assert done.status_code == 200 and done.json()["state"] == "completed"
    other = (await agents.a.post("/v1/approvals", json=REFUND)).json()["id"]
    assert (await agents.b.post(f"/v1/approvals/{other}/cancel", json={})).status_code == 404
    assert (await agents.a.post(f"/v1/approvals/{other}/cancel", json={})).json()["state"] == (
        "cancelled"
    )


async def test_questions_are_their_askers(agents: Agents) -> None:
    asked = await agents.a.post("/v1/questions", json={"question": "A1 or A2?"})
    assert asked.status_code == 201 and asked.json()["owner"] == "agent-a"
    qid = asked.json()["id"]
    for params in ({}, {"wait": 0.2}):
        theirs = await agents.b.get(f"/v1/questions/{qid}", params=params)
        unknown = await agents.b.get("/v1/questions/qnobody", params=params)
        assert _as_unknown(theirs, qid, unknown, "qnobody")
    assert (await agents.a.get(f"/v1/questions/{qid}")).json()["question"] == "A1 or A2?"
    waited = await agents.a.get(f"/v1/questions/{qid}", params={"wait": 0.2})
    assert waited.status_code == 200 and waited.json()["state"] == "open"
    assert (await agents.ops.get(f"/v1/questions/{qid}", params={"wait": 0.2})).status_code == 200


async def test_another_identity_gets_404_on_every_run_route(agents: Agents) -> None:
    run = (await agents.a.post("/v1/runs", json={"agent": "claw", "prompt": "go"})).json()
    assert run["owner"] == "agent-a"
    rid = run["run_id"]
    assert (await agents.a.post(f"/v1/runs/{rid}/steer", json={"text": "left"})).status_code == 201
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/v1/runs/{}", {}),
        ("GET", "/v1/runs/{}/steering", {}),
        ("POST", "/v1/runs/{}/steer", {"json": {"text": "right"}}),
        ("POST", "/v1/runs/{}/stop", {}),
        ("POST", "/v1/approvals", {"json": {**REFUND, "run_id": "{}"}}),
        ("POST", "/v1/questions", {"json": {"question": "?", "run_id": "{}"}}),
    ]
    for method, path, kw in calls:
        theirs = await agents.b.request(method, path.format(rid), **_fill(kw, rid))
        assert theirs.status_code == 404 and theirs.json()["detail"] == f"No run with id {rid}."
    # The correction agent-b tried to take is still there for agent-a.
    popped = await agents.a.get(f"/v1/runs/{rid}/steering")
    assert popped.status_code == 200 and popped.json()["text"] == "left"
    assert (await agents.a.get(f"/v1/runs/{rid}")).json()["stop_requested"] is False
    filed = await agents.a.post("/v1/approvals", json={**REFUND, "run_id": rid})
    assert filed.status_code == 201


async def test_operators_read_and_stop_but_do_not_act_as_the_owner(agents: Agents) -> None:
    rid = (await agents.a.post("/v1/approvals", json=REFUND)).json()["id"]
    assert (await agents.ops.get(f"/v1/approvals/{rid}")).json()["args"] == {"amount": 40}
    waited = await agents.ops.get(f"/v1/approvals/{rid}", params={"wait": 0.2})
    assert waited.status_code == 200 and waited.json()["state"] == "pending_review"
    assert (await agents.ops.post(f"/v1/approvals/{rid}/cancel", json={})).status_code == 404
    assert (await agents.ops.post(f"/v1/approvals/{rid}/claim")).status_code == 404
    run = (await agents.a.post("/v1/runs", json={"agent": "claw", "prompt": "go"})).json()
    run_id = run["run_id"]
    await agents.a.post(f"/v1/runs/{run_id}/steer", json={"text": "left"})
    assert (await agents.ops.get(f"/v1/runs/{run_id}")).json()["prompt"] == "go"
    assert (await agents.ops.get(f"/v1/runs/{run_id}/steering")).status_code == 404
    steer = await agents.ops.post(f"/v1/runs/{run_id}/steer", json={"text": "right"})
    assert steer.status_code == 404
    stopped = await agents.ops.post(f"/v1/runs/{run_id}/stop")
    assert stopped.status_code == 200 and stopped.json()["state"] == "stopped"
    assert (await agents.a.get(f"/v1/runs/{run_id}")).json()["stop_requested"] is True
    assert (await agents.a.get(f"/v1/runs/{run_id}/steering")).json()["text"] == "left"


async def test_a_run_id_belongs_to_whoever_used_it_first(agents: Agents) -> None:
    first = await agents.a.post("/v1/approvals", json={**REFUND, "run_id": "ext:a-1"})
    assert first.status_code == 201
    for resp in (
        await agents.b.post("/v1/approvals", json={**REFUND, "run_id": "ext:a-1"}),
        await agents.b.post("/v1/questions", json={"question": "?", "run_id": "ext:a-1"}),
        await agents.b.post("/v1/runs/ext:a-1/steer", json={"text": "x"}),
        await agents.b.get("/v1/runs/ext:a-1/steering"),
    ):
        assert resp.status_code == 404, resp.text
    assert (await agents.a.post("/v1/runs/ext:a-1/steer", json={"text": "x"})).status_code == 201
    asked = await agents.a.post("/v1/questions", json={"question": "?", "run_id": "ext:a-1"})
    assert asked.status_code == 201
    # A question is a first use too, and so is reading the run's corrections.
    await agents.b.post("/v1/questions", json={"question": "?", "run_id": "ext:b-1"})
    assert (await agents.b.get("/v1/runs/ext:b-2/steering")).status_code == 204
    for run_id in ("ext:b-1", "ext:b-2"):
        taken = await agents.a.post("/v1/approvals", json={**REFUND, "run_id": run_id})
        assert taken.status_code == 404
    # A steer on an id nobody used writes nothing and takes nothing.
    assert (await agents.b.post("/v1/runs/ext:c-1/steer", json={"text": "x"})).status_code == 404
    filed = await agents.a.post("/v1/approvals", json={**REFUND, "run_id": "ext:c-1"})
    assert filed.status_code == 201


async def test_two_identities_racing_for_a_new_run_id_one_wins(agents: Agents) -> None:
    for i in range(8):
        body = {**REFUND, "run_id": f"ext:race-{i}"}
        got = await asyncio.gather(
            agents.a.post("/v1/approvals", json=body), agents.b.post("/v1/approvals", json=body)
        )
        assert sorted(r.status_code for r in got) == [201, 404]


async def test_idempotency_keys_are_each_identitys_own(agents: Agents) -> None:
    key = {"idempotency_key": "refund-order-77"}
    a = await agents.a.post("/v1/approvals", json={**REFUND, **key})
    b = await agents.b.post("/v1/approvals", json={"tool": "refund", "args": {"amount": 9}, **key})
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"] and b.json()["args"] == {"amount": 9}
    again = await agents.b.post(
        "/v1/approvals", json={"tool": "refund", "args": {"amount": 9}, **key}
    )
    assert again.status_code == 200 and again.json()["id"] == b.json()["id"]
    clash = await agents.b.post(
        "/v1/approvals", json={"tool": "refund", "args": {"amount": 3}, **key}
    )
    assert clash.status_code == 409 and clash.json()["error"] == "idempotency_conflict"
    assert b.json()["payload_hash"] in clash.json()["detail"]
    assert a.json()["payload_hash"] not in clash.json()["detail"]
    mine = await agents.a.post("/v1/approvals", json={**REFUND, **key})
    assert mine.status_code == 200 and mine.json()["id"] == a.json()["id"]


async def test_runs_and_questions_only_in_review_channels(agents: Agents) -> None:
    run = {"agent": "claw", "prompt": "go"}
    for path, body in (("/v1/runs", run), ("/v1/questions", {"question": "?"})):
        refused = await agents.a.post(path, json={**body, "channel": "C0GENERAL1"})
        assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
        assert "C0GENERAL1" in refused.json()["detail"] and "#approvals" in refused.json()["detail"]
        ok = await agents.a.post(path, json={**body, "channel": "#approvals"})
        assert ok.status_code == 201 and ok.json()["channel"] == "#approvals"
    # Refused before anything was written: the run id was not taken either.
    asked = {"question": "?", "channel": "C0GENERAL1", "run_id": "ext:d-1"}
    assert (await agents.a.post("/v1/questions", json=asked)).status_code == 403
    assert (await agents.b.get("/v1/runs/ext:d-1/steering")).status_code == 204


def _fill(kw: dict[str, Any], rid: str) -> dict[str, Any]:
    if "json" not in kw:
        return kw
    return {"json": {k: rid if v == "{}" else v for k, v in kw["json"].items()}}


async def test_the_runs_owner_sees_what_its_worker_filed_but_the_worker_runs_it(
    agents: Agents, redis: Redis
) -> None:
    run = (await agents.a.post("/v1/runs", json={"agent": "claw", "prompt": "go"})).json()
    # What a worker files for the run: the agent's name as requester, the run's owner.
    made = await RequestStore(redis).create(
        parse_policy(QUORUM_POLICY),
        tool="refund",
        args={"amount": 3},
        requester="agent:claw",
        run_id=run["run_id"],
        owner="agent-a",
    )
    rid = made.request.id
    seen = await agents.a.get(f"/v1/approvals/{rid}")
    assert seen.status_code == 200 and seen.json()["owner"] == "agent-a"
    assert seen.json()["requester"] == "agent:claw"
    assert (await agents.b.get(f"/v1/approvals/{rid}")).status_code == 404
    await _approve(redis, rid)
    refused = await agents.a.post(f"/v1/approvals/{rid}/claim")
    assert refused.status_code == 403 and "worker" in refused.json()["detail"]
    assert (await agents.a.post(f"/v1/approvals/{rid}/cancel", json={})).status_code == 403
    assert (await agents.b.post(f"/v1/approvals/{rid}/claim")).status_code == 404
    assert (await RequestStore(redis).get(rid)).state == "approved"
