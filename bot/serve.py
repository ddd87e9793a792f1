"""`hitl-bot serve`: the ASGI app (Slack endpoint, /v1, /healthz, /metrics), the
sweeper that ends every request, and the notifier that tells Slack.

Run as many copies as you like against one Redis: the sweepers' timers are
fenced and the notifiers share one consumer group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass

from bot.api.app import create_app
from bot.asgi import serve_asgi
from bot.clock import Clock, wall_ms
from bot.config import Settings
from bot.deadlines.sweeper import Sweeper
from bot.metrics import MetricsCollector
from bot.runtime import open_runtime
from bot.slack.app import build_app
from bot.slack.client import web_client
from bot.slack.http import slack_endpoint
from bot.slack.notifier import Notifier
from bot.store.runs import RunStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeOptions:
    default_agent: str = "claw"
    notifier_retry_ms: int = 15_000  # how long an undelivered Slack message waits to retry
    sweep_interval_s: float = 0.25


def check_settings(settings: Settings) -> None:
    """Refuse to start without what Slack needs, naming the variable and the fix."""
    needed = ["SLACK_BOT_TOKEN"]
    if not settings.socket_mode:
        needed.append("SLACK_SIGNING_SECRET")  # every HTTP request from Slack is verified
    settings.require(*needed)


async def run_serve(
    settings: Settings,
    stop: asyncio.Event,
    *,
    clock: Clock = wall_ms,
    options: ServeOptions | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    options = options or ServeOptions()
    check_settings(settings)
    async with open_runtime(settings, clock=clock) as rt:
        runs = RunStore(rt.redis, clock=clock)
        client = web_client(settings)
        secret = settings.slack_signing_secret
        bolt = build_app(
            rt,
            runs,
            client,
            default_agent=options.default_agent,
            signing_secret=secret.get_secret_value() if secret else "",
        )
        api = create_app(
            rt,
            slack_handler=slack_endpoint(bolt, secret.get_secret_value() if secret else ""),
            runs=runs,
        )
        served = await serve_asgi(api, settings.hitl_host, settings.hitl_port)
        consumer = f"{socket.gethostname()}-{os.getpid()}"
        notifier = Notifier(
            rt, runs, client, consumer=consumer, retry_idle_ms=options.notifier_retry_ms
        )
        sweeper = Sweeper(rt.requests, rt.questions, clock=clock)
        tasks = [
            asyncio.create_task(notifier.run(stop)),
            asyncio.create_task(sweeper.run(stop, options.sweep_interval_s)),
            asyncio.create_task(MetricsCollector(rt.redis, consumer=consumer).run(stop)),
        ]
        socket_mode = None
        if settings.socket_mode and settings.slack_app_token:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            socket_mode = AsyncSocketModeHandler(bolt, settings.slack_app_token.get_secret_value())
            await socket_mode.connect_async()  # type: ignore[no-untyped-call]
        log.info("hitl-bot serving on %s", served.url)
        if on_ready is not None:
            on_ready(served.url)
        try:
            await stop.wait()
        finally:
            stop.set()
            if socket_mode is not None:
                await socket_mode.close_async()  # type: ignore[no-untyped-call]
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(task, 10)
            await served.stop()
