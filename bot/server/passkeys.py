"""The passkey pages wired to Slack's decision path: a verified confirmation is applied
as the approver's own decision (their groups looked up, what they saw recorded), the
same way a click would have been, naming the credential."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette

from bot.core.models import Decision
from bot.gate.runtime import Runtime
from bot.passkey.web import passkey_app
from bot.slack.listeners.approvals import Approvals, refusal_text
from bot.store.requests import Moved


def passkey_pages(rt: Runtime, approvals: Approvals, client: AsyncWebClient) -> Starlette:
    async def apply(user: str, rid: str, d: Decision, version: int, foreign: bool) -> Moved:
        return await approvals.decide(
            client, user, rid, d, foreign=foreign, expect_version=version, confirmed=True
        )

    return passkey_app(rt, apply, refusal_text=refusal_text)
