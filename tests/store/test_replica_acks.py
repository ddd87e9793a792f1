"""HITL_REPLICA_ACKS on one primary with a replica: what the start-up log says, and
what a caller is told when the replica does not confirm (a claim answers 503 with
Retry-After and the executor must not start; a stop, an answer and a correction are not
acknowledged)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from pydantic import SecretStr

from bot.api import create_app
from bot.config import Settings
from bot.core.models import Decision, QuestionState, RunState
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db.connection import connect
from bot.errors import NotReplicated
from bot.gate.corrections import correct, stop_run
from bot.gate.runtime import Runtime
from tests.api.live import TOKEN, make_runtime
from tests.support.replicated import Replicated

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def replicated() -> Iterator[Replicated]:
    r = Replicated().start()
    try:
        yield r
    finally:
        r.stop()


@contextlib.asynccontextmanager
async def runtime(r: Replicated, policy: Policy, acks: int) -> AsyncIterator[Runtime]:
    settings = Settings(
        redis_url=SecretStr(r.url), hitl_replica_acks=acks, hitl_replica_ack_timeout_ms=200
    )
    client, _ = await connect(settings)
    try:
        await client.flushdb()
        yield make_runtime(client, policy)
    finally:
        await client.aclose()


@contextlib.contextmanager
def stalled(r: Replicated) -> Iterator[None]:
    (replica,) = r.followers
    replica.pause()
    try:
        yield
    finally:
        replica.resume()


@pytest.mark.parametrize(
    ("acks", "says"),
    [
        (0, "Redis has 1 replica(s) but HITL_REPLICA_ACKS=0"),
        (1, "acknowledged once 1 replica(s) confirm them"),
        (2, "HITL_REPLICA_ACKS=2 but a primary has only 1 replica(s)"),
    ],
)
async def test_start_says_what_acknowledges_a_transition(
    replicated: Replicated,
    policy: Policy,
    caplog: pytest.LogCaptureFixture,
    acks: int,
    says: str,
) -> None:
    with caplog.at_level(logging.INFO, logger="bot.db.durability"):
        async with runtime(replicated, policy, acks):
            pass
    assert says in caplog.text
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "REPLICA" in r.msg]
    assert bool(warned) == (acks != 1)


async def test_a_claim_the_replica_did_not_confirm_is_503_and_runs_nothing(
    replicated: Replicated, policy: Policy
) -> None:
    async with runtime(replicated, policy, acks=1) as rt:
        app = create_app(rt)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=auth) as api:
            body = {"tool": "refund", "args": {"amount": 5, "to": "cus_9"}}
            made = (await api.post("/v1/approvals", json=body)).json()
            approve = Decision(event=Event.APPROVE, actor="U2", payload_hash=made["payload_hash"])
            await rt.requests.transition(made["id"], approve)
            with stalled(replicated):
                r = await api.post(f"/v1/approvals/{made['id']}/claim")
            assert r.status_code == 503, r.text
            assert r.json()["error"] == "not_replicated"
            assert "Not yet saved" in r.json()["detail"]
            assert r.headers["Retry-After"] == "1"
            metrics = (await api.get("/metrics")).text
            assert 'hitl_replica_acks_total{outcome="timeout"}' in metrics
            confirmed = [
                line
                for line in metrics.splitlines()
                if line.startswith('hitl_replica_acks_total{outcome="confirmed"}')
            ]
            assert confirmed and int(confirmed[0].split()[-1]) >= 1  # the approve before


async def test_a_decision_the_replica_did_not_confirm_is_not_acknowledged(
    replicated: Replicated, policy: Policy
) -> None:
    async with runtime(replicated, policy, acks=1) as rt:
        made = await rt.requests.create(
            policy, tool="refund", args={"amount": 7, "to": "cus_3"}, requester="agent"
        )
        req = made.request
        approve = Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        with stalled(replicated), pytest.raises(NotReplicated, match="Try again"):
            await rt.requests.transition(req.id, approve)
        # Tried again once the replica is back: the same decision, now confirmed.
        again = await rt.requests.transition(req.id, approve)
        assert again.request.state == State.APPROVED and again.repeat


async def test_a_stop_is_acknowledged_only_once_the_replica_holds_it(
    replicated: Replicated, policy: Policy
) -> None:
    async with runtime(replicated, policy, acks=1) as rt:
        run = await rt.runs.start(agent="billing", prompt="refund the customer", requester="U1")
        with stalled(replicated), pytest.raises(NotReplicated):
            await stop_run(rt.runs, rt.requests, rt.questions, rt.steering, run.id, actor="UALICE")
        stopped = await stop_run(
            rt.runs, rt.requests, rt.questions, rt.steering, run.id, actor="UALICE"
        )
        assert stopped.stop_requested


async def test_an_answer_is_acknowledged_only_once_the_replica_holds_it(
    replicated: Replicated, policy: Policy
) -> None:
    async with runtime(replicated, policy, acks=1) as rt:
        q = await rt.questions.ask("Which account?", timeout_ms=600_000)
        with stalled(replicated), pytest.raises(NotReplicated, match="Try again"):
            await rt.questions.answer(q.id, actor="UALICE", answer="EU")
        # The same answer again once the replica is back: taken, now confirmed.
        again = await rt.questions.answer(q.id, actor="UALICE", answer="EU")
        assert (again.state, again.answer) == (QuestionState.ANSWERED, "EU")


async def test_a_correction_not_confirmed_still_withdraws_the_call_it_contradicts(
    replicated: Replicated, policy: Policy
) -> None:
    async with runtime(replicated, policy, acks=1) as rt:
        run = await rt.runs.start(agent="billing", prompt="refund the customer", requester="U1")
        made = await rt.requests.create(
            policy, tool="refund", args={"amount": 9, "to": "cus_4"}, requester="agent"
        )
        await rt.runs.update(run.id, state=RunState.WAITING, waiting_on=made.request.id)
        with stalled(replicated), pytest.raises(NotReplicated, match="Try again"):
            await correct(rt.steering, rt.requests, rt.runs, run.id, "not that one", actor="U1")
        # Nobody may approve the contradicted call while the person tries again.
        assert (await rt.requests.get(made.request.id)).state == State.CANCELLED
        assert await rt.steering.pending(run.id) == 1
        await rt.steering.confirm_saved(run.id)  # the replica is back: it holds the queue
