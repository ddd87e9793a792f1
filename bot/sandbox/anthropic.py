"""A scripted Anthropic Messages API (`POST /v1/messages`, streamed) on a real socket.

Claude Code's CLI runs offline against it (`ANTHROPIC_BASE_URL`): the main
conversation (a request that offers tools) is answered from a script of turns, each a
tool call or a final text; any other request Claude Code makes on the side (a title,
a summary) gets a short text. Every body is recorded, so a test can read what the
model was told, such as the tool result a deny turned into.

    async with ScriptedClaude([use("Write", file_path="/p/x", content="hi"), text("Done")]) as m:
        env = {"ANTHROPIC_BASE_URL": m.base_url, ...}
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bot.sandbox.local import LocalServer


@dataclass(frozen=True)
class Step:
    text: str | None = None
    tool: str | None = None
    input: dict[str, Any] = field(default_factory=dict)


def use(tool: str, **tool_input: Any) -> Step:
    """The model calls `tool` with `tool_input`."""
    return Step(tool=tool, input=tool_input)


def text(words: str) -> Step:
    """The model answers and ends its turn."""
    return Step(text=words)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class ScriptedClaude:
    def __init__(self, steps: Iterable[Step], *, side_answer: str = "ok") -> None:
        self.steps = list(steps)
        self.played = 0
        self.side_answer = side_answer
        self.requests: list[dict[str, Any]] = []  # the main conversation's bodies
        self.side: list[dict[str, Any]] = []  # every other body
        self.base_url = ""
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count, methods=["POST"]),
            ]
        )
        self._local = LocalServer(self.app, "the scripted Anthropic API")

    async def _count(self, request: Request) -> Response:
        return JSONResponse({"input_tokens": 1})

    async def _messages(self, request: Request) -> Response:
        body = json.loads(await request.body() or b"{}")
        if self._is_main(body):
            self.requests.append(body)
            step = self.steps[self.played] if self.played < len(self.steps) else text("(end)")
            self.played += 1
        else:
            self.side.append(body)
            step = text(self.side_answer)
        if not body.get("stream"):
            return JSONResponse(self._message(step))
        return StreamingResponse(self._stream(step, body), media_type="text/event-stream")

    def _is_main(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools")) and self.played < len(self.steps)

    def _message(self, step: Step) -> dict[str, Any]:
        block: dict[str, Any]
        if step.tool is not None:
            block = {"type": "tool_use", "id": _id("toolu"), "name": step.tool, "input": step.input}
        else:
            block = {"type": "text", "text": step.text or ""}
        return {
            "id": _id("msg"),
            "type": "message",
            "role": "assistant",
            "model": "claude-scripted",
            "content": [block],
            "stop_reason": "tool_use" if step.tool else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }

    async def _stream(self, step: Step, body: dict[str, Any]) -> AsyncIterator[bytes]:
        whole = self._message(step)
        start = {**whole, "content": [], "stop_reason": None}
        yield _sse("message_start", {"type": "message_start", "message": start})
        block = whole["content"][0]
        if step.tool is not None:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
        else:
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text or ""}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": opened},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})

    def tool_results(self) -> list[str]:
        """The text of every tool result the model was sent, in order."""
        if not self.requests:
            return []
        out: list[str] = []
        for m in self.requests[-1].get("messages") or []:
            for block in m.get("content") or [] if isinstance(m.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(_text_of(block.get("content")))
        return out

    async def start(self, host: str = "127.0.0.1") -> str:
        port = await self._local.start(host, 0)
        self.base_url = f"http://{host}:{port}"
        return self.base_url

    async def stop(self) -> None:
        await self._local.stop()

    async def __aenter__(self) -> ScriptedClaude:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""
