"""A started emulator, a Web API client pointed at it, and a fake bot that records and
signature-checks what the emulator delivers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import pytest
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.sandbox.slack import BackgroundServer, SlackEmulator

SECRET = "test-signing-secret"
TOKEN = "xoxb-test-token"


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode(), keep_blank_values=True))

    def payload(self) -> dict[str, Any]:
        """An interaction's `payload=<json>`."""
        data: dict[str, Any] = json.loads(self.form()["payload"])
        return data

    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data


Behaviour = Callable[[Received], Awaitable[Response]]


async def ack(received: Received) -> Response:
    return Response(status_code=200)


class FakeBot:
    """Answers with `behaviour`; refuses (401) and counts requests with a bad signature."""

    def __init__(self, secret: str = SECRET) -> None:
        self.verifier = SignatureVerifier(secret)
        self.received: list[Received] = []
        self.bad_signatures = 0
        self.behaviour: Behaviour = ack
        self.server = BackgroundServer(
            Starlette(routes=[Route("/slack/events", self._endpoint, methods=["POST"])])
        )

    async def _endpoint(self, request: Request) -> Response:
        body = await request.body()
        headers = dict(request.headers)
        if not self.verifier.is_valid_request(body, headers):
            self.bad_signatures += 1
            return Response(status_code=401)
        received = Received(headers, body)
        self.received.append(received)
        return await self.behaviour(received)

    @property
    def url(self) -> str:
        return self.server.base_url + "/slack/events"

    def events(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.received if r.content_type.startswith("application/json")]

    def payloads(self) -> list[dict[str, Any]]:
        return [r.payload() for r in self.received if "payload" in r.form()]


@pytest.fixture(scope="session")
async def _running_emulator() -> AsyncIterator[SlackEmulator]:
    emu = SlackEmulator(SECRET, TOKEN)
    await emu.start()
    try:
        yield emu
    finally:
        await emu.stop()


@pytest.fixture(scope="session")
async def _running_bot() -> AsyncIterator[FakeBot]:
    bot = FakeBot()
    await bot.server.start()
    try:
        yield bot
    finally:
        await bot.server.stop()


@pytest.fixture
async def emulator(_running_emulator: SlackEmulator) -> SlackEmulator:
    """One server for the session, reset to a clean workspace for every test."""
    await _running_emulator.reset()
    _running_emulator.events_url = None
    return _running_emulator


@pytest.fixture
def fake_bot(emulator: SlackEmulator, _running_bot: FakeBot) -> FakeBot:
    _running_bot.received.clear()
    _running_bot.bad_signatures = 0
    _running_bot.behaviour = ack
    emulator.events_url = _running_bot.url
    return _running_bot


@pytest.fixture
def client(emulator: SlackEmulator) -> AsyncWebClient:
    return AsyncWebClient(token=TOKEN, base_url=emulator.api_url)


def button(action_id: str, value: str = "v", **extra: Any) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": action_id.title()},
        "action_id": action_id,
        "value": value,
        **extra,
    }


def actions(*elements: dict[str, Any], block_id: str = "decide") -> list[dict[str, Any]]:
    return [{"type": "actions", "block_id": block_id, "elements": list(elements)}]
