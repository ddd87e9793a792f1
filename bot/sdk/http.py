"""HTTP mode: the SDK talks to `hitl-bot serve`'s `/v1` API.

Error responses are turned back into the exception classes direct mode
raises (`NotFound`, `AlreadyResolved`, ...), so callers handle both alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import httpx
from pydantic import BaseModel

from bot.core.models import ActionRequest, Question, Steering
from bot.core.wire import ApprovalIn, CancelIn, ClaimIn, QuestionIn, ResultIn
from bot.errors import (
    WIRE,
    AlreadyResolved,
    ConfigError,
    HitlError,
    InvalidTransition,
    PayloadError,
)
from bot.sdk import messages as msg
from bot.sdk.backend import NewRequest
from bot.sdk.errors import ApiError, ApiUnavailable, steered
from bot.sdk.tracing import trace_headers

# The API's `error` codes (bot.api.errors) -> the class direct mode raises.
# The API's `error` codes -> the class direct mode raises (bot.errors.WIRE, inverted),
# plus the codes only the HTTP layer produces.
SIMPLE: dict[str, type[HitlError]] = {
    **{code: cls for cls, (_, code) in WIRE.items() if not issubclass(cls, InvalidTransition)},
    "validation_error": PayloadError,
    "body_too_large": PayloadError,
    "api_disabled": ConfigError,
}
TRANSITIONS: dict[str, type[InvalidTransition]] = {
    code: cls for cls, (_, code) in WIRE.items() if issubclass(cls, InvalidTransition)
}
WAIT_SLACK_S = 10.0  # read timeout beyond a long-poll's own wait


def error_from(status: int, body: dict[str, Any]) -> HitlError:
    code = str(body.get("error", ""))
    detail = str(body.get("detail", "")) or f"HTTP {status}"
    state, event = str(body.get("state") or ""), str(body.get("event") or "")
    if code == "already_resolved":
        return AlreadyResolved(
            detail,
            state=state,
            by=str(body.get("by", "")),
            at=int(body.get("at") or 0),
            how=str(body.get("how", "")),
        )
    if code in TRANSITIONS:
        return TRANSITIONS[code](detail, state=state, event=event)
    if code in ("steered", "run_stopped"):  # a person spoke before the call: not filed
        text, actor = body.get("text"), body.get("actor")
        return steered(
            detail,
            stopped=code == "run_stopped",
            text=None if text is None else str(text),
            actor=None if actor is None else str(actor),
        )
    if code in SIMPLE:
        return SIMPLE[code](detail)
    if code == "unauthorized":
        return ConfigError(msg.TOKEN_REJECTED.format(detail=detail))
    return ApiError(msg.API_ERROR.format(status=status, detail=detail), status=status, error=code)


class HttpBackend:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout_s: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.client = httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "User-Agent": "hitl-bot-sdk"},
            timeout=timeout_s,
            transport=transport,
        )

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: BaseModel | None = None,
        params: dict[str, str] | None = None,
        read_s: float | None = None,
    ) -> httpx.Response:
        timeout = httpx.Timeout(self.timeout_s, read=read_s or self.timeout_s)
        try:
            resp = await self.client.request(
                method,
                path,
                json=None if body is None else body.model_dump(mode="json", exclude_none=True),
                params=params,
                timeout=timeout,
                headers=trace_headers() or None,
            )
        except httpx.TransportError as exc:
            raise ApiUnavailable(msg.API_UNREACHABLE.format(url=self.url, error=exc)) from exc
        if resp.status_code >= 400:
            try:
                data = resp.json()
            except ValueError:
                data = {}
            raise error_from(resp.status_code, data if isinstance(data, dict) else {})
        return resp

    async def _request(self, method: str, path: str, **kw: Any) -> ActionRequest:
        return ActionRequest.model_validate((await self._call(method, path, **kw)).json())

    async def create(self, **fields: Unpack[NewRequest]) -> ActionRequest:
        body = ApprovalIn(**fields)  # a None requester: the server takes the token's
        return await self._request("POST", "/v1/approvals", body=body)

    async def create_claimed(self, **fields: Unpack[NewRequest]) -> tuple[ActionRequest, bool]:
        """`create`: the API claims nothing on creation; the caller claims in a call."""
        return await self.create(**fields), False

    async def get(self, rid: str) -> ActionRequest:
        return await self._request("GET", f"/v1/approvals/{rid}")

    async def wait(self, rid: str, timeout_s: float) -> ActionRequest:
        return await self._request(
            "GET",
            f"/v1/approvals/{rid}",
            params={"wait": f"{max(0.0, timeout_s):.3f}"},
            read_s=timeout_s + WAIT_SLACK_S,
        )

    async def claim(self, rid: str, *, token: str | None = None) -> ActionRequest:
        body = None if token is None else ClaimIn(claim_token=token)
        return await self._request("POST", f"/v1/approvals/{rid}/claim", body=body)

    async def report(
        self,
        rid: str,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None,
        executing: bool = False,
        fence: str | None = None,
    ) -> ActionRequest:
        body = ResultIn(ok=ok, detail=detail, compensated=compensated, fence=fence)
        return await self._request("POST", f"/v1/approvals/{rid}/result", body=body)

    async def report_executed(
        self,
        rid: str,
        *,
        ok: bool,
        detail: str | None,
        compensated: bool | None,
        fence: str | None = None,
    ) -> None:
        await self.report(
            rid, ok=ok, detail=detail, compensated=compensated, executing=True, fence=fence
        )

    async def cancel(self, rid: str, *, reason: str) -> ActionRequest:
        body = CancelIn(reason=reason)
        return await self._request("POST", f"/v1/approvals/{rid}/cancel", body=body)

    async def ask(
        self,
        question: str,
        *,
        timeout_s: float,
        run_id: str | None,
        channel: str | None,
        options: Sequence[str] = (),
    ) -> Question:
        body = QuestionIn(
            question=question,
            timeout_seconds=timeout_s,
            run_id=run_id,
            channel=channel,
            options=list(options),
        )
        resp = await self._call("POST", "/v1/questions", body=body)
        return Question.model_validate(resp.json())

    async def wait_question(self, qid: str, timeout_s: float) -> Question:
        resp = await self._call(
            "GET",
            f"/v1/questions/{qid}",
            params={"wait": f"{max(0.0, timeout_s):.3f}"},
            read_s=timeout_s + WAIT_SLACK_S,
        )
        return Question.model_validate(resp.json())

    async def pop_steering(self, run_id: str) -> Steering | None:
        resp = await self._call("GET", f"/v1/runs/{run_id}/steering")
        if resp.status_code == 204 or not resp.content:
            return None
        return Steering.model_validate(resp.json())

    async def aclose(self) -> None:
        await self.client.aclose()
