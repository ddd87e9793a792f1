"""An outside agent's run over /v1: a run like a worker's, read, steered and stopped.

The run id is the agent's own (it never called POST /v1/runs): its first approval
makes it a run, and a person's correction or stop reaches its next call, or the call
it waits on, as they reach a worker's.
"""

from __future__ import annotations

import json

import httpx
from redis.asyncio import Redis

from bot.store import keys
from tests.api.conftest import AUTH
from tests.api.live import AGENT_TOKEN, LiveServer
from tests.cli.test_cli import cli

RUN = "ext:billing-7"


async def _propose(
    client: httpx.AsyncClient, tool: str = "refund", run: str = RUN, **args: object
) -> httpx.Response:
    return await client.post(
        "/v1/approvals", json={"tool": tool, "args": args or {"amount": 5}, "run_id": run}
    )


async def test_the_first_call_makes_the_run_its_owner_reads_and_others_do_not(
    client: httpx.AsyncClient,
) -> None:
    assert (await _propose(client)).status_code == 201
    run = (await client.get(f"/v1/runs/{RUN}")).json()
    assert (run["run_id"], run["state"], run["outside"], run["owner"]) == (
        RUN,
        "running",
        True,
        "api",
    )
    other = {"Authorization": f"Bearer {AGENT_TOKEN}"}  # agent-7, another identity
    assert (await client.get(f"/v1/runs/{RUN}", headers=other)).status_code == 404
    assert (await client.post(f"/v1/runs/{RUN}/stop", headers=other)).status_code == 404
    steer = await client.post(f"/v1/runs/{RUN}/steer", json={"text": "x"}, headers=other)
    assert steer.status_code == 404


async def test_a_queued_correction_answers_the_next_call_409_steered_once(
    client: httpx.AsyncClient, redis: Redis
) -> None:
    assert (await _propose(client, "move_claw", x=1)).status_code == 201
    pushed = await client.post(f"/v1/runs/{RUN}/steer", json={"text": "refund A2, not A1"})
    assert pushed.status_code == 201

    refused = await _propose(client, "move_claw", x=2)

    assert refused.status_code == 409
    body = refused.json()
    assert body["error"] == "steered"
    assert (body["text"], body["actor"]) == ("refund A2, not A1", "api")
    assert body["detail"] == "Cancelled. The person says: refund A2, not A1"
    # nothing was filed for the refused call, and the correction was handed out once
    assert len(await _requests(redis)) == 1
    assert (await client.get(f"/v1/runs/{RUN}/steering")).status_code == 204
    assert (await _propose(client, "move_claw", x=3)).status_code == 201


async def _requests(redis: Redis) -> list[str]:
    return [k async for k in redis.scan_iter(match=f"{keys.PREFIX}*:req:*")]


async def test_a_correction_withdraws_the_call_the_agent_waits_on(
    client: httpx.AsyncClient,
) -> None:
    made = (await _propose(client)).json()
    assert made["state"] == "pending_review"

    await client.post(f"/v1/runs/{RUN}/steer", json={"text": "wrong order"})

    got = (await client.get(f"/v1/approvals/{made['id']}", params={"wait": 5})).json()
    assert got["state"] == "cancelled"
    assert got["resolution"]["reason_code"] == "superseded"
    fix = (await client.get(f"/v1/runs/{RUN}/steering")).json()
    assert (fix["text"], fix["actor"]) == ("wrong order", "api")


async def test_a_stop_withdraws_the_waiting_call_and_refuses_every_later_one(
    client: httpx.AsyncClient,
) -> None:
    made = (await _propose(client)).json()

    stopped = await client.post(f"/v1/runs/{RUN}/stop")

    assert stopped.status_code == 200
    assert (stopped.json()["state"], stopped.json()["stop_requested"]) == ("stopped", True)
    got = (await client.get(f"/v1/approvals/{made['id']}")).json()
    assert (got["state"], got["resolution"]["reason_code"]) == ("cancelled", "run_stopped")
    for tool in ("refund", "move_claw"):
        refused = await _propose(client, tool, x=9)
        assert refused.status_code == 409 and refused.json()["error"] == "run_stopped"
        assert "stopped by a person" in refused.json()["detail"]
    late = await client.post(f"/v1/runs/{RUN}/steer", json={"text": "too late"})
    assert late.status_code == 409


async def test_a_run_title_names_the_run_once_and_only_for_its_owner(
    client: httpx.AsyncClient,
) -> None:
    # its first use is a read of its corrections: a run with no name yet
    assert (await client.get(f"/v1/runs/{RUN}/steering")).status_code == 204
    assert (await client.get(f"/v1/runs/{RUN}")).json()["prompt"] == ""
    other = {"Authorization": f"Bearer {AGENT_TOKEN}"}
    body = {"tool": "move_claw", "args": {"x": 1}, "run_id": RUN, "run_title": "hijacked"}
    assert (await client.post("/v1/approvals", json=body, headers=other)).status_code == 404
    assert (await client.get(f"/v1/runs/{RUN}")).json()["prompt"] == ""

    named = {**body, "run_title": "Billing agent, ticket 7"}
    assert (await client.post("/v1/approvals", json=named)).status_code == 201
    renamed = {**body, "args": {"x": 2}, "run_title": "something else"}
    assert (await client.post("/v1/approvals", json=renamed)).status_code == 201
    assert (await client.get(f"/v1/runs/{RUN}")).json()["prompt"] == "Billing agent, ticket 7"
    bad = {**body, "run_title": "two\nlines"}
    assert (await client.post("/v1/approvals", json=bad)).status_code == 422


async def test_an_api_run_finishes_over_the_api_and_hitl_bot_runs_says_so(
    live: LiveServer, redis_url: str
) -> None:
    """An outside agent's run has no worker to end it: without POST .../finish it stayed
    "running" in `hitl-bot runs` forever. Its owner ends it once nothing waits."""
    run = "ext:finish-7"  # its own: the session's live server outlives each test's flush
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH) as c:
        made = (await _propose(c, run=run)).json()
        early = await c.post(f"/v1/runs/{run}/finish", json={"detail": "refunded"})
        assert early.status_code == 409 and made["id"] in early.json()["detail"]
        other = {"Authorization": f"Bearer {AGENT_TOKEN}"}  # another identity: not its run
        assert (await c.post(f"/v1/runs/{run}/finish", headers=other)).status_code == 404
        assert (await c.post(f"/v1/approvals/{made['id']}/cancel")).status_code == 200

        done = await c.post(f"/v1/runs/{run}/finish", json={"detail": "refunded A2"})
        assert done.status_code == 200, done.text
        assert (done.json()["state"], done.json()["result"]) == ("finished", "refunded A2")
        again = await c.post(f"/v1/runs/{run}/finish", json={"ok": False})
        assert again.status_code == 409 and "finished already" in again.json()["detail"]

        queued = (await c.post("/v1/runs", json={"agent": "billing", "prompt": "ticket 9"})).json()
        failed = await c.post(
            f"/v1/runs/{queued['id']}/finish", json={"ok": False, "detail": "no such order"}
        )
        assert (failed.json()["state"], failed.json()["error"]) == ("failed", "no such order")

    code, out, err = await cli("runs", "--json", redis_url=redis_url)
    assert code == 0, err
    states = {r["id"]: r["state"] for r in json.loads(out)}
    assert (states[run], states[queued["id"]]) == ("finished", "failed")


async def test_finish_refuses_a_verdict_that_is_not_a_boolean(
    client: httpx.AsyncClient,
) -> None:
    run = "ext:finish-strict"  # its own run: the live server's store outlives a test
    made = await client.post(
        "/v1/approvals", json={"tool": "refund", "args": {"amount": 5}, "run_id": run}
    )
    assert made.status_code == 201
    for bad in ({"ok": 0}, {"ok": "false"}, {"ok": None}):
        got = await client.post(f"/v1/runs/{run}/finish", json=bad)
        assert got.status_code == 422, (bad, got.text)
    assert (await client.get(f"/v1/runs/{run}")).json()["state"] == "running"
