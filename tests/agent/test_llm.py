"""The chat-completions client against the scripted model over real HTTP."""

from __future__ import annotations

import logging
from email.utils import formatdate

import httpx
import pytest

from bot.agent.errors import MalformedResponse, ModelRefused, ModelUnavailable
from bot.agent.llm import ChatClient
from bot.config import Settings
from bot.errors import ConfigError
from bot.sandbox.model import Expect, call, say
from tests.agent.conftest import ModelFactory


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def test_tool_calls_come_back_normalised(scripted: ModelFactory) -> None:
    model = await scripted([call("drop_claw", target="bear")])
    async with ChatClient(model.base_url, "m", api_key="k") as llm:
        reply = await llm.complete(
            [{"role": "user", "content": "Get me the bear!"}], [{"type": "function"}]
        )
    assert reply.finish_reason == "tool_calls" and reply.content is None
    (tc,) = reply.tool_calls
    assert tc.name == "drop_claw" and tc.arguments == '{"target": "bear"}'
    assert tc.id.startswith("call_")
    assert reply.message["tool_calls"][0]["id"] == tc.id
    assert model.requests[0] == {
        "model": "m",
        "messages": [{"role": "user", "content": "Get me the bear!"}],
        "tools": [{"type": "function"}],
    }


async def test_retries_429_honouring_retry_after_then_500(scripted: ModelFactory) -> None:
    model = await scripted([say("hello")])
    model.fail(429, times=2, retry_after=1.5)
    model.fail(500)
    sleeps = Sleeps()
    async with ChatClient(model.base_url, "m", backoff_s=0.2, sleep=sleeps) as llm:
        reply = await llm.complete([{"role": "user", "content": "hi"}])
    assert reply.content == "hello" and reply.finish_reason == "stop"
    assert len(model.requests) == 4
    assert sleeps.waits[:2] == [1.5, 1.5]  # the server's Retry-After, not our backoff
    assert 0.1 <= sleeps.waits[2] <= 0.8  # then exponential backoff with jitter


async def test_gives_up_clearly_after_every_retry(
    scripted: ModelFactory, caplog: pytest.LogCaptureFixture
) -> None:
    model = await scripted([say("never")])
    model.fail(503, times=10)
    sleeps = Sleeps()
    caplog.set_level(logging.WARNING, logger="bot.agent.llm")
    async with ChatClient(model.base_url, "m", max_retries=2, sleep=sleeps) as llm:
        with pytest.raises(ModelUnavailable, match=r"HTTP 503 after 3 tries.*OPENAI_BASE_URL"):
            await llm.complete([{"role": "user", "content": "hi"}])
    assert len(model.requests) == 3 and len(sleeps.waits) == 2
    # One structured log line per failed call, the last one saying it gave up.
    failures = [r for r in caplog.records if r.getMessage() == "model call failed"]
    assert [r.attempt for r in failures] == [1, 2, 3]  # type: ignore[attr-defined]
    assert [r.retrying for r in failures] == [True, True, False]  # type: ignore[attr-defined]
    assert all(r.error == "HTTP 503" for r in failures)  # type: ignore[attr-defined]


async def test_malformed_body_is_a_clear_error_without_retry(scripted: ModelFactory) -> None:
    model = await scripted([say("never")])
    model.malformed(body="<html>proxy error</html>")
    async with ChatClient(model.base_url, "m") as llm:
        with pytest.raises(MalformedResponse, match=r"not JSON.*<html>proxy error"):
            await llm.complete([{"role": "user", "content": "hi"}])
    assert len(model.requests) == 1


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('{"choices": []}', "no choices"),
        ('{"choices": [{"finish_reason": "stop"}]}', "message is missing"),
        ('{"choices": [{"message": {"content": 3}}]}', "not text"),
        ('{"choices": [{"message": {"tool_calls": [{"id": "x"}]}}]}', "no function name"),
    ],
)
async def test_shapes_that_are_not_chat_completions(
    scripted: ModelFactory, body: str, problem: str
) -> None:
    model = await scripted([])
    model.malformed(body=body)
    async with ChatClient(model.base_url, "m") as llm:
        with pytest.raises(MalformedResponse, match=problem):
            await llm.complete([])


async def test_a_refusal_is_not_retried(scripted: ModelFactory) -> None:
    model = await scripted([say("x", expect=Expect(role="tool"))])
    async with ChatClient(model.base_url, "m") as llm:
        with pytest.raises(ModelRefused, match="scripted model: turn 1") as info:
            await llm.complete([{"role": "user", "content": "hi"}])
    assert info.value.status == 400 and len(model.requests) == 1


async def test_network_errors_are_retried() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpx.ConnectError("refused", request=request)
        date = formatdate(0, usegmt=True)  # a Retry-After date in the past: retry at once
        if calls == 2:
            return httpx.Response(429, headers={"Retry-After": date})
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    sleeps = Sleeps()
    llm = ChatClient(
        "http://model.invalid/v1",
        "m",
        sleep=sleeps,
        backoff_s=0.01,
        transport=httpx.MockTransport(handler),
    )
    async with llm:
        assert (await llm.complete([])).content == "ok"
    assert calls == 3 and sleeps.waits[1] == 0.0


def test_settings_must_name_a_model() -> None:
    with pytest.raises(ConfigError, match="HITL_MODEL"):
        ChatClient.from_settings(Settings(hitl_model=None))
