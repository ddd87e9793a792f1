"""Gate: configuration, questions, steering, withdrawal, and errors alike in both modes."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from redis.asyncio import Redis

from bot.api.errors import STATUS
from bot.clock import wall_ms
from bot.core.models import QuestionState
from bot.core.states import State
from bot.errors import ConfigError, HitlError, NotFound, PayloadError
from bot.sdk import ApiUnavailable, Gate, Unanswered
from bot.sdk.http import error_from
from bot.store.requests import RequestStore
from bot.store.run.questions import QuestionStore
from bot.store.run.steering import SteeringStore
from tests.api.live import TOKEN, LiveServer
from tests.sdk.conftest import caller_waits
from tests.support.keys import serve_signer
from tests.support.poll import eventually


def test_from_env_picks_the_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HITL_API_URL", "http://127.0.0.1:3000")
    monkeypatch.setenv("HITL_API_TOKEN", "t")
    assert Gate.from_env().mode == "http"
    monkeypatch.delenv("HITL_API_TOKEN")
    with pytest.raises(ConfigError, match="HITL_API_TOKEN"):
        Gate.from_env()
    monkeypatch.delenv("HITL_API_URL")
    assert Gate.from_env(requester="bot-1").mode == "direct"


def test_every_api_error_code_maps_back_to_its_class() -> None:
    """The SDK raises over HTTP what direct mode raises: the codes must agree."""
    for cls, (status, code) in STATUS.items():
        if cls.__name__ in ("HitlError", "ConfigError"):
            continue
        body = {"error": code, "detail": "x", "state": "s", "by": "U", "at": 1, "how": "h"}
        assert type(error_from(status, body)) is cls, code


async def test_errors_are_the_same_classes_in_both_modes(gate: Gate) -> None:
    with pytest.raises(NotFound):
        await gate.get("nope123")
    with pytest.raises(PayloadError, match="tool"):
        await gate.submit("rm -rf /", {})
    with pytest.raises(PayloadError):
        await gate.submit("refund", {"x": float("nan")})
    with pytest.raises(PayloadError, match="question"):
        await gate.ask("x" * 4000, timeout=1)


async def test_wrong_token_and_unreachable_api() -> None:
    async with Gate(api_url="http://127.0.0.1:1", api_token="t", http_timeout_s=1) as gate:
        with pytest.raises(ApiUnavailable, match="Cannot reach"):
            await gate.get("abc")


async def test_wrong_token_is_a_config_error(live: LiveServer) -> None:
    async with Gate(api_url=live.url, api_token="not-it") as gate:
        with pytest.raises(ConfigError, match="HITL_API_TOKEN"):
            await gate.get("abc")


def _answer_later(redis_url: str, answer: str) -> threading.Thread:
    """Answers the open question once the asker waits for it, from another thread."""

    async def main() -> None:
        redis = Redis.from_url(redis_url, decode_responses=True)
        try:
            qs = QuestionStore(redis)

            async def open_ids() -> list[str]:
                ids = [k.rpartition(":")[2] for k in await redis.keys("hitl:*:q:*")]
                return [i for i in ids if (await qs.get(i)).state == QuestionState.OPEN]

            asked = await eventually(open_ids, what="an open question")
            await caller_waits()
            await qs.answer(asked[0], actor="UKID", answer=answer)
        finally:
            await redis.aclose()

    t = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    t.start()
    return t


async def test_ask_returns_the_answer(gate: Gate, redis_url: str) -> None:
    t = _answer_later(redis_url, "the penguin")
    assert await gate.ask("Which prize?", timeout=10, run_id="run-1") == "the penguin"
    t.join(5)


async def test_ask_sync_returns_the_answer(gate: Gate, redis_url: str) -> None:
    t = _answer_later(redis_url, "A2")
    answer = await asyncio.to_thread(gate.ask_sync, "Which order?", timeout=10)
    assert answer == "A2"
    t.join(5)


async def test_ask_without_an_answer_raises(gate: Gate) -> None:
    t0 = time.monotonic()
    with pytest.raises(Unanswered) as caught:
        await gate.ask("Anyone?", timeout=0.3)
    assert time.monotonic() - t0 < 3
    assert isinstance(caught.value, HitlError) and caught.value.question is not None


async def test_steering_pops_each_correction_once(gate: Gate, redis: Redis) -> None:
    steer = SteeringStore(redis)
    assert await gate.steering("run-5") is None
    await steer.push("run-5", "aim left", actor="U1")
    await steer.push("run-5", "now grab", actor="U1")
    assert await gate.steering("run-5") == "aim left"
    assert await asyncio.to_thread(gate.steering_sync, "run-5") == "now grab"
    assert await gate.steering("run-5") is None
    with pytest.raises(PayloadError):
        await gate.steering("bad run id!")


async def test_a_caller_that_stops_waiting_withdraws_its_request(gate: Gate, redis: Redis) -> None:
    task = asyncio.create_task(gate.request_approval("refund", {"order": "A3"}))
    store = RequestStore(redis, clock=wall_ms, signer=serve_signer())  # decides as serve
    pending = await eventually(store.list_pending, what="the request in review")
    task.cancel()  # e.g. the agent framework's own tool timeout
    with pytest.raises(asyncio.CancelledError):
        await task
    req = await store.get(pending[0].id)
    assert req.state == State.CANCELLED
    assert req.resolution is not None and req.resolution.reason_code == "caller_gone"
    assert req.resolution.actor == req.requester  # whoever asked withdrew, in either mode


async def test_low_level_claim_and_report(gate: Gate, redis: Redis) -> None:
    from bot.core.models import Decision
    from bot.core.states import Event

    req = await gate.submit("refund", {"order": "A4", "amount": 5}, idempotency_key="k-a4")
    again = await gate.submit("refund", {"order": "A4", "amount": 5}, idempotency_key="k-a4")
    assert again.id == req.id
    store = RequestStore(redis, clock=wall_ms, signer=serve_signer())  # decides as serve
    await store.transition(
        req.id, Decision(event=Event.APPROVE, actor="UREV", payload_hash=req.payload_hash)
    )
    approved = await gate.decision(req.id)
    assert approved.state == State.APPROVED
    assert (await gate.claim(req.id)).state == State.EXECUTING
    done = await gate.report(req.id, ok=True, detail="x" * 5000)
    assert done.state == State.COMPLETED and done.detail == "x" * 2999 + "…"


def test_sync_use_without_a_loop(live: LiveServer) -> None:
    with Gate(api_url=live.url, api_token=TOKEN) as gate:
        assert gate.steering_sync("run-none") is None
        assert gate.run_sync(gate.steering("run-none")) is None


async def test_closing_the_gate_ends_a_sync_wait_and_withdraws_its_request(
    gate: Gate, redis: Redis
) -> None:
    """A sync caller waits on the gate's private loop; closing the gate from another
    thread (shutdown) must end that wait with an error and withdraw the request,
    never leave the thread blocked forever or the call pending."""
    got: list[object] = []

    def waits() -> None:
        try:
            got.append(gate.run_sync(gate.request_approval("refund", {"order": "A5"})))
        except BaseException as exc:  # what the caller's thread sees, whatever it is
            got.append(exc)

    caller = threading.Thread(target=waits, daemon=True)
    caller.start()
    store = RequestStore(redis, clock=wall_ms, signer=serve_signer())  # decides as serve
    pending = await eventually(store.list_pending, what="the sync call's request in review")

    await asyncio.to_thread(gate.close)
    await asyncio.to_thread(caller.join, 10)

    assert not caller.is_alive(), "closing the gate left the caller's thread blocked"
    assert len(got) == 1 and isinstance(got[0], RuntimeError), got
    assert "closed" in str(got[0])
    req = await store.get(pending[0].id)
    assert req.state == State.CANCELLED
    assert req.resolution is not None and req.resolution.reason_code == "caller_gone"
