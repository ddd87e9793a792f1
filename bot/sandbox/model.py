"""A scripted model: an OpenAI-compatible `POST /v1/chat/completions` on a real socket.

It answers from a script (a list of turns, each with an optional check of the
last message it was sent) or from any responder function, such as the claw
machine's rules in `bot/demo/claw_script.py`. Failures can be injected ahead of the script
(429 with Retry-After, 500, a body that is not JSON), and every request body is
recorded so a test can assert what the model was sent.

    model = ScriptedModel([call("drop_claw", target="bear"), say("Got it!")])
    base_url = await model.start()          # http://127.0.0.1:PORT/v1
    ...
    await model.stop()
"""

from __future__ import annotations

import itertools
import json
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.sandbox.local import LocalServer

Message = Mapping[str, Any]


@dataclass(frozen=True)
class Expect:
    """What the last message of a request must look like for a turn to answer it."""

    role: str | None = None
    contains: str | None = None

    def problem(self, messages: Sequence[Message]) -> str | None:
        last = messages[-1] if messages else {}
        content = str(last.get("content") or "")
        if self.role is not None and last.get("role") != self.role:
            return (
                f"expected the last message from {self.role}, got {last.get('role')}: {content!r}"
            )
        if self.contains is not None and self.contains not in content:
            return f"expected the last message to contain {self.contains!r}, got {content!r}"
        return None


@dataclass(frozen=True)
class Call:
    name: str
    arguments: Mapping[str, Any] | str  # text is sent verbatim: malformed on purpose
    id: str | None = None  # None: a fresh call_... id; set to mimic servers that reuse ids


@dataclass(frozen=True)
class Turn:
    content: str | None = None
    calls: tuple[Call, ...] = ()
    expect: Expect | None = None


def say(content: str, *, expect: Expect | None = None) -> Turn:
    """A final answer (finish_reason "stop")."""
    return Turn(content=content, expect=expect)


def call(
    name: str,
    _raw: str | None = None,
    *,
    expect: Expect | None = None,
    call_id: str | None = None,
    **args: Any,
) -> Turn:
    """One tool call; `_raw` sends that text as the arguments instead of `args` as JSON."""
    return Turn(calls=(Call(name, _raw if _raw is not None else args, call_id),), expect=expect)


def after_tool(contains: str | None = None) -> Expect:
    return Expect(role="tool", contains=contains)


class ScriptError(Exception):
    """The conversation left the script; the server answers 400 with this text."""


Responder = Callable[[Sequence[Message]], Turn]


class Script:
    """A responder that plays `turns` in order, checking each turn's expectation."""

    def __init__(self, turns: Iterable[Turn]) -> None:
        self.turns = list(turns)
        self.played = 0

    def __call__(self, messages: Sequence[Message]) -> Turn:
        if self.played >= len(self.turns):
            raise ScriptError(
                f"the script has no turn {self.played + 1} (it has {len(self.turns)})"
            )
        turn = self.turns[self.played]
        if turn.expect is not None and (problem := turn.expect.problem(messages)):
            raise ScriptError(f"turn {self.played + 1}: {problem}")
        self.played += 1
        return turn


@dataclass
class _Fault:
    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedModel:
    def __init__(self, script: Responder | Iterable[Turn], *, model: str = "scripted") -> None:
        self.responder: Responder = script if callable(script) else Script(script)
        self.model = model
        self.requests: list[dict[str, Any]] = []  # every body received, failures included
        self._faults: deque[_Fault] = deque()
        self._ids = itertools.count(1)
        self.base_url = ""
        self.app = Starlette(
            routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])]
        )
        self._local = LocalServer(self.app, "the scripted model")

    # Error injection: these answers come before the script's next turn.

    def fail(self, status: int = 500, *, times: int = 1, retry_after: float | None = None) -> None:
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        body = json.dumps({"error": {"message": f"injected {status}", "type": "injected"}})
        self._faults.extend(_Fault(status, body, headers) for _ in range(times))

    def malformed(self, *, times: int = 1, body: str = "<html>502 Bad Gateway</html>") -> None:
        self._faults.extend(_Fault(200, body) for _ in range(times))

    async def _complete(self, request: Request) -> Response:
        body = json.loads(await request.body() or b"{}")
        self.requests.append(body)
        if self._faults:
            f = self._faults.popleft()
            return Response(f.body, f.status, headers=f.headers, media_type="application/json")
        try:
            turn = self.responder(body.get("messages") or [])
        except ScriptError as exc:
            error = {"message": f"scripted model: {exc}", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=400)
        return JSONResponse(self._completion(turn))

    def _completion(self, turn: Turn) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": c.id or f"call_{next(self._ids):04d}{secrets.token_hex(4)}",
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.arguments
                        if isinstance(c.arguments, str)
                        else json.dumps(c.arguments),
                    },
                }
                for c in turn.calls
            ]
        return {
            "id": "chatcmpl-" + secrets.token_hex(8),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if turn.calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen (port 0: any free one) and return the base URL, ending in /v1."""
        bound = await self._local.start(host, port)
        self.base_url = f"http://{host}:{bound}/v1"
        return self.base_url

    async def stop(self) -> None:
        await self._local.stop()

    async def __aenter__(self) -> ScriptedModel:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def sent(self, index: int = -1) -> list[dict[str, Any]]:
        """The messages of the `index`th request received."""
        return list(self.requests[index].get("messages") or [])
