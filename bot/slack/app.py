"""The Bolt app: listeners wired to the store. It never imports the agent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ConfigError
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.features import FEATURES
from bot.slack.listeners import prologue
from bot.slack.listeners.approvals import Approvals
from bot.slack.listeners.choose import Choose
from bot.slack.listeners.commands import Commands
from bot.slack.listeners.replies import ReplyDecisions
from bot.slack.listeners.threads import Threads
from bot.slack.listeners.view_seal import ViewSeal
from bot.store.run.runs import RunStore

SEEN_TTL_S = 3600  # Slack retries within minutes; an hour is ample


def build_app(
    rt: Runtime,
    runs: RunStore,
    client: AsyncWebClient,
    *,
    signing_secret: str | None,
    default_agent: str | None = None,
) -> AsyncApp:
    """`signing_secret` None means Socket Mode: requests come over the bot's own
    authenticated WebSocket, Bolt verifies nothing, and no HTTP endpoint may be mounted."""
    app = AsyncApp(
        client=client,
        # "" rather than None: None makes Bolt read SLACK_SIGNING_SECRET from the environment
        signing_secret=signing_secret or "",
        request_verification_enabled=signing_secret is not None,
        process_before_response=False,
    )

    if rt.signer is None:  # a modal's metadata is sealed with serve's key (view_seal.py)
        raise ConfigError(smsg.APP_NEEDS_KEY)
    keys = rt.claims.keys or rt.signer.public()
    prologue.install(app, ViewSeal(rt.signer, keys))

    @app.middleware
    async def once_per_event(
        body: dict[str, Any], next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        # Slack retries an event it thinks we missed (X-Slack-Retry-Num) with the
        # same event_id; Bolt does not deduplicate, so the store does.
        event_id = body.get("event_id")
        if event_id and not await rt.slack.first_sight(event_id, SEEN_TTL_S):
            return BoltResponse(status=200, body="")
        await next()
        return None

    approvals = Approvals(rt)
    approvals.register(app)
    for feature in FEATURES:
        if feature.listen is not None:
            feature.listen(app, rt, approvals)
    Choose(approvals).register(app)
    replies = ReplyDecisions(rt, approvals)
    Threads(rt, runs, replies, default_agent=default_agent).register(app)
    Commands(rt, runs, FEATURES).register(app)
    return app
