"""An OpenAI-compatible chat-completions client over httpx.

Any endpoint that speaks `POST {base}/chat/completions` works: OpenAI, a proxy,
Ollama, vLLM, or `bot.sandbox.model` in tests. Rate limits and server errors
are retried with exponential backoff (a `Retry-After` header wins over the
backoff); a body that is not a chat completion fails at once with the first
bytes of what came back, because retrying a misconfigured URL only hides it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from bot.agent import messages as msg
from bot.agent.errors import MalformedResponse, ModelRefused, ModelUnavailable
from bot.clock import wall_ms
from bot.config import Settings
from bot.errors import ConfigError

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model wrote it; the tool validates it


@dataclass(frozen=True)
class Completion:
    message: dict[str, Any]  # the assistant message, normalised, ready for the transcript
    finish_reason: str

    @property
    def content(self) -> str | None:
        content = self.message.get("content")
        return content if isinstance(content, str) else None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tool_calls_of(self.message)


def tool_calls_of(message: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    """The tool calls of a normalised assistant message (as stored in a transcript)."""
    return tuple(
        ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in message.get("tool_calls") or ()
    )


class ChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
            transport=transport,
        )

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> ChatClient:
        if not settings.hitl_model:
            raise ConfigError(msg.NO_MODEL)
        key = settings.openai_api_key
        return cls(
            settings.openai_base_url or "https://api.openai.com/v1",
            settings.hitl_model,
            api_key=key.get_secret_value() if key else None,
            **options,
        )

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        **extra: Any,
    ) -> Completion:
        """One chat completion; retries 429, 5xx and network errors, then gives up clearly."""
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), **extra}
        if tools:
            body["tools"] = list(tools)
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                resp = await self._http.post(self.url, json=body)
            except httpx.TransportError as exc:
                last, wait = f"{type(exc).__name__} ({exc})", None
            else:
                if resp.status_code == 429 or resp.status_code >= 500:
                    last, wait = f"HTTP {resp.status_code}", _retry_after(resp)
                elif resp.status_code >= 400:
                    log.error(
                        "model call refused",
                        extra={"url": self.url, "model": self.model, "status": resp.status_code},
                    )
                    raise ModelRefused(
                        msg.MODEL_REFUSED.format(
                            url=self.url, status=resp.status_code, detail=_error_detail(resp)
                        ),
                        status=resp.status_code,
                    )
                else:
                    return _parse(resp, self.url)
            log.warning(
                "model call failed",
                extra={
                    "url": self.url,
                    "model": self.model,
                    "error": last,
                    "attempt": attempt + 1,
                    "retrying": attempt < self.max_retries,
                },
            )
            if attempt < self.max_retries:
                await self._sleep(wait if wait is not None else self._backoff(attempt))
        raise ModelUnavailable(
            msg.MODEL_UNAVAILABLE.format(url=self.url, what=last, tries=self.max_retries + 1)
        )

    def _backoff(self, attempt: int) -> float:
        # Jitter keeps many workers that failed together from retrying together.
        ceiling = min(self.max_backoff_s, self.backoff_s * 2.0**attempt)
        return ceiling * (0.5 + random.random() / 2)


def _retry_after(resp: httpx.Response) -> float | None:
    raw = resp.headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(raw).timestamp() - wall_ms() / 1000
        except (TypeError, ValueError):
            return None
    # A provider asking for an hour must not park a worker for an hour per try.
    return min(60.0, max(0.0, seconds))


def _error_detail(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:300]
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"])
    return str(err or data)[:300]


def _parse(resp: httpx.Response, url: str) -> Completion:
    def bad(problem: str) -> MalformedResponse:
        return MalformedResponse(
            msg.MALFORMED.format(
                url=url, status=resp.status_code, problem=problem, head=resp.text[:200]
            )
        )

    try:
        data = resp.json()
    except ValueError:
        raise bad("not JSON") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad("no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise bad("choices[0].message is missing")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise bad("message.content is not text")
    out: dict[str, Any] = {"role": "assistant", "content": content}
    calls = [_tool_call(c, bad) for c in message.get("tool_calls") or ()]
    if calls:
        out["tool_calls"] = calls
    finish = choice.get("finish_reason") or ("tool_calls" if calls else "stop")
    return Completion(out, str(finish))


def _tool_call(raw: object, bad: Callable[[str], MalformedResponse]) -> dict[str, Any]:
    fn = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise bad("a tool call has no function name")
    args = fn.get("arguments")
    if args is None:
        args = "{}"
    elif not isinstance(args, str):
        args = json.dumps(args)  # some servers send an object instead of JSON text
    call_id = raw.get("id") if isinstance(raw, dict) else None
    if not isinstance(call_id, str) or not call_id:
        # Without an id the result cannot be matched to its call; make one up, stably stored.
        call_id = "call_" + secrets.token_hex(8)
    return {"id": call_id, "type": "function", "function": {"name": fn["name"], "arguments": args}}
