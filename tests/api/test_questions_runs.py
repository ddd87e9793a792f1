"""/v1/questions and /v1/runs: ask, start, read, stop, steer, pop the steering."""

from __future__ import annotations

import httpx
from redis.asyncio import Redis

from bot.core.models import RunState
from bot.gate.runtime import Runtime
from bot.store import keys
from bot.store.run.runs import RunStore


async def test_question_round_trip(client: httpx.AsyncClient, runtime: Runtime) -> None:
    resp = await client.post(
        "/v1/questions",
        json={"question": "Refund A1 or A2?", "run_id": "run-9", "timeout_seconds": 60},
    )
    assert resp.status_code == 201
    q = resp.json()
    assert q["state"] == "open" and q["run_id"] == "run-9" and q["answer"] is None
    assert q["expires_at"] - q["asked_at"] == 60_000
    await runtime.questions.answer(q["id"], actor="UOPS", answer="A2")
    got = (await client.get(f"/v1/questions/{q['id']}", params={"wait": 5})).json()
    assert (got["state"], got["answer"], got["answered_by"]) == ("answered", "A2", "UOPS")


async def test_question_limits_and_unknown(client: httpx.AsyncClient) -> None:
    too_long = await client.post("/v1/questions", json={"question": "x" * 3001})
    assert too_long.status_code == 422
    zero = await client.post("/v1/questions", json={"question": "?", "timeout_seconds": 0})
    assert zero.status_code == 422
    missing = await client.get("/v1/questions/qnope")
    assert missing.status_code == 404


async def test_run_start_get_stop(client: httpx.AsyncClient, redis: Redis) -> None:
    resp = await client.post(
        "/v1/runs", json={"agent": "claw", "prompt": "win the penguin", "on_behalf_of": "U1"}
    )
    assert resp.status_code == 201
    run = resp.json()
    assert run["run_id"] == run["id"] and run["state"] == "queued"
    assert run["requester"] == "U1"
    queued = await redis.xrange(keys.RUN_QUEUE)
    assert [f["run_id"] for _, f in queued] == [run["run_id"]]  # the workers will see it
    got = await client.get(f"/v1/runs/{run['run_id']}")
    assert got.json()["prompt"] == "win the penguin"
    stopped = await client.post(f"/v1/runs/{run['run_id']}/stop")
    assert stopped.status_code == 200
    assert stopped.json()["stop_requested"] is True and stopped.json()["state"] == "stopped"


async def test_stop_withdraws_what_the_run_waits_on(
    client: httpx.AsyncClient, redis: Redis, runtime: Runtime
) -> None:
    runs = RunStore(redis)
    run = (await client.post("/v1/runs", json={"agent": "claw", "prompt": "go"})).json()
    made = (
        await client.post(
            "/v1/approvals", json={"tool": "refund", "args": {}, "run_id": run["run_id"]}
        )
    ).json()
    await runs.update(run["run_id"], state=RunState.WAITING, waiting_on=made["id"])
    await client.post(f"/v1/runs/{run['run_id']}/stop")
    after = (await client.get(f"/v1/approvals/{made['id']}")).json()
    assert after["state"] == "cancelled"
    assert after["resolution"]["reason_code"] == "run_stopped"


async def test_unknown_run_is_404(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/runs/run-nope")).status_code == 404
    assert (await client.post("/v1/runs/run-nope/stop")).status_code == 404


async def test_steer_then_pop_once(client: httpx.AsyncClient) -> None:
    run = (await client.post("/v1/runs", json={"agent": "claw", "prompt": "go"})).json()
    rid = run["run_id"]
    empty = await client.get(f"/v1/runs/{rid}/steering")
    assert empty.status_code == 204 and empty.content == b""
    pushed = await client.post(f"/v1/runs/{rid}/steer", json={"text": "aim for the penguin"})
    assert pushed.status_code == 201 and pushed.json()["actor"] == "api"  # the token's identity
    await client.post(f"/v1/runs/{rid}/steer", json={"text": "then stop"})
    first = await client.get(f"/v1/runs/{rid}/steering")
    second = await client.get(f"/v1/runs/{rid}/steering")
    third = await client.get(f"/v1/runs/{rid}/steering")
    assert first.json()["text"] == "aim for the penguin"
    assert second.json()["text"] == "then stop" and second.json()["actor"] == "api"
    assert third.status_code == 204


async def test_steering_an_outside_agents_run(client: httpx.AsyncClient) -> None:
    # The outside agent's run is known by a request it made under that run id.
    made = await client.post(
        "/v1/approvals", json={"tool": "refund", "args": {"amount": 1}, "run_id": "ext:thread-42"}
    )
    assert made.status_code == 201
    pushed = await client.post("/v1/runs/ext:thread-42/steer", json={"text": "slower"})
    assert pushed.status_code == 201
    assert (await client.get("/v1/runs/ext:thread-42/steering")).json()["text"] == "slower"


async def test_steering_a_finished_run_is_409(client: httpx.AsyncClient, redis: Redis) -> None:
    run = (await client.post("/v1/runs", json={"agent": "claw", "prompt": "go"})).json()
    await RunStore(redis).update(run["run_id"], state=RunState.FINISHED)
    resp = await client.post(f"/v1/runs/{run['run_id']}/steer", json={"text": "late"})
    assert resp.status_code == 409 and "finished" in resp.json()["detail"]


async def test_run_body_limits(client: httpx.AsyncClient) -> None:
    assert (await client.post("/v1/runs", json={"agent": "claw"})).status_code == 422
    bad_agent = await client.post("/v1/runs", json={"agent": "a b", "prompt": "x"})
    assert bad_agent.status_code == 422
    empty = await client.post("/v1/runs/run-1/steer", json={"text": ""})
    assert empty.status_code == 422
