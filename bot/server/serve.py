"""`hitl-bot serve`: the ASGI app (Slack endpoint, /v1, /healthz, /metrics), the
sweeper that ends every request, the notifier that tells Slack, and the trim of
the events streams once every reader acknowledged them.

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

from bot import messages as msg
from bot.api.app import create_app
from bot.asgi import bind_tcp, serve_asgi
from bot.clock import Clock, wall_ms
from bot.config import Settings
from bot.core.policy import load_policy
from bot.deadlines.retention import Retainer
from bot.deadlines.sweeper import Sweeper
from bot.errors import PortInUse
from bot.gate.runtime import open_runtime
from bot.gate.stepup import check_public_url
from bot.server.passkeys import passkey_pages
from bot.signing import load_signer
from bot.slack.app import build_app
from bot.slack.checks.preflight import preflight_at_start
from bot.slack.checks.principals import resolve_at_start
from bot.slack.delivery.notifier import Notifier
from bot.slack.delivery.refusals import REFUSAL_BACKOFF
from bot.slack.features import FEATURES
from bot.slack.listeners.approvals import Approvals
from bot.slack.nudges.teller import Teller, watch_of
from bot.slack.transport.client import web_client
from bot.slack.transport.http import slack_endpoint
from bot.slack.transport.ratelimit import Limits
from bot.slack.transport.socket_mode import SocketModeLink
from bot.store.figures.metrics import GROUP as METRICS_GROUP
from bot.store.stream.events import NOTIFIER_GROUP
from bot.store.stream.events_trim import INTERVAL_S
from bot.store.stream.group_reader import Retry
from bot.supervise import Backoff, Supervisor
from bot.telemetry.outbound import outbound

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeOptions:
    default_agent: str | None = None  # None: HITL_DEFAULT_AGENT (the demo names its own)
    notifier_retry_ms: int | None = None  # None: HITL_OUTBOX_RETRY_MS (15 s by default)
    sweep_interval_s: float = 0.25
    events_trim_interval_s: float = INTERVAL_S  # acknowledged events leave Redis this often
    socket_backoff: Backoff | None = None  # Socket Mode reconnects; None: 1 s doubling to 30 s
    # Longest wait for new events in one read; a stop waits for the read in progress.
    read_block_ms: int = 1_000
    slack_timeout_s: int = 10  # one Slack Web API call, past which it counts as lost
    # What the Web API gate paces to. None: Slack's published limits when SLACK_API_URL is
    # Slack's, else only the 429s it hears; a test against a scaled emulator scales them.
    slack_limits: Limits | None = None
    slack_gate: bool = True  # False: each call waits its own 429 (the bench's comparison)
    # Between tries of a message Slack refused until a person fixes something (the bot
    # not in the channel, ...); None: 15 s doubling to 5 minutes (bot/slack/delivery/refusals.py).
    refusal_backoff: Backoff | None = None
    # An OpenTelemetry TracerProvider (bot/telemetry/spans.py `provider`); None: from the
    # OTEL_* variables, off unless they configure an exporter (docs/tracing.md).
    tracer_provider: object = None
    webhook_retry: Retry | None = None  # None: HITL_WEBHOOK_RETRY_MS, _MAX_ATTEMPTS


def check_settings(settings: Settings) -> None:
    """Refuse to start without what Slack needs, naming the variable and the fix."""
    needed = ["SLACK_BOT_TOKEN"]
    if not settings.socket_mode:
        needed.append("SLACK_SIGNING_SECRET")  # every HTTP request from Slack is verified
    settings.require(*needed)


def ready_line(settings: Settings, url: str) -> str:
    """The start line: which mode serve is in and where Slack's events come from."""
    if settings.socket_mode:
        return msg.SERVE_READY_SOCKET.format(url=url, api=settings.slack_api_url)
    return msg.SERVE_READY_HTTP.format(url=url)


async def run_serve(
    settings: Settings,
    stop: asyncio.Event,
    *,
    clock: Clock = wall_ms,
    options: ServeOptions | None = None,
    on_ready: Callable[[str], None] | None = None,
    tasks: Supervisor | None = None,
) -> None:
    """Serve until `stop` is set. Every background task runs under `tasks` (one is made
    when None; the demo passes its own so its worker shows on /healthz too)."""
    options = options or ServeOptions()
    tasks = tasks or Supervisor()
    check_settings(settings)
    policy = load_policy(settings.hitl_policy)
    check_public_url(settings, policy)  # a step-up tier needs its page (fail closed)
    # The key only serve holds: its store seals every person's decision and every default.
    signer = load_signer(settings)
    async with open_runtime(settings, clock=clock, policy=policy, signer=signer) as rt:
        runs = rt.runs
        client = web_client(
            settings,
            timeout_s=options.slack_timeout_s,
            limits=options.slack_limits,
            gate=options.slack_gate,
        )
        if settings.slack_bot_token is not None:
            # Side by side, each within the one start budget (START_CHECK_S): a Slack that
            # hangs holds serve's start back once, not once per check.
            # The first refusal (a ConfigError naming the fix) stops serve as it is.
            for failed in await asyncio.gather(
                resolve_at_start(rt.slack, client, rt.policy),
                preflight_at_start(client, rt.policy),  # the token's scopes, the user groups
                return_exceptions=True,
            ):
                if isinstance(failed, BaseException):
                    raise failed
        token = settings.slack_app_token
        app_token = token.get_secret_value() if token else None
        # Socket Mode: no signing secret is used anywhere and /slack/events is not mounted.
        signing = settings.slack_signing_secret
        secret = signing.get_secret_value() if signing and not app_token else None
        bolt = build_app(
            rt,
            runs,
            client,
            default_agent=options.default_agent or settings.hitl_default_agent,
            signing_secret=secret,
        )
        link = (
            SocketModeLink(bolt, app_token, settings.slack_api_url, backoff=options.socket_backoff)
            if app_token
            else None
        )
        api = create_app(
            rt,
            slack_handler=slack_endpoint(bolt, secret) if secret else None,
            runs=runs,
            probes=[link.status.problem] if link else [],
            tasks=tasks,
            max_waiting=settings.hitl_max_waiting_per_identity,
        )
        if settings.hitl_public_url:
            api.mount("/passkey", passkey_pages(rt, Approvals(rt), client))
        host, port = settings.hitl_host, settings.hitl_port
        try:  # bound here: a busy port is an error that says so, not uvicorn exiting
            sock = bind_tcp(host, port)
        except OSError as exc:
            raise PortInUse(msg.PORT_IN_USE.format(host=host, port=port, error=exc)) from None
        served = await serve_asgi(api, host, port, sock=sock)
        consumer = f"{socket.gethostname()}-{os.getpid()}"
        notifier = Notifier(
            rt,
            runs,
            client,
            consumer=consumer,
            retry_idle_ms=options.notifier_retry_ms or settings.hitl_outbox_retry_ms,
            policy=rt.policy,
            block_ms=options.read_block_ms,
            refusal_backoff=options.refusal_backoff or REFUSAL_BACKOFF,
            parts=[f.card_part for f in FEATURES if f.card_part is not None],
        )
        sweeper = Sweeper(rt.requests, rt.questions, clock=clock)
        collector = rt.metrics_collector(consumer=consumer, block_ms=options.read_block_ms)
        out = outbound(
            rt,
            consumer=consumer,
            tracer=options.tracer_provider,
            retry=options.webhook_retry,
            block_ms=options.read_block_ms,
        )
        await out.forget_others(rt)
        trimmer = rt.events_trimmer((NOTIFIER_GROUP, METRICS_GROUP, *out.groups))
        trim_every = options.events_trim_interval_s
        running = [
            tasks.start("notifier", lambda: notifier.run(stop), stop),
            tasks.start("sweeper", lambda: sweeper.run(stop, options.sweep_interval_s), stop),
            tasks.start("metrics", lambda: collector.run(stop), stop),
            tasks.start("events_trim", lambda: trimmer.run(stop, trim_every), stop),
        ]
        for name, reader in out.readers.items():
            running.append(tasks.start(name, lambda r=reader: r.run(stop), stop))  # type: ignore[misc]
        if every := settings.hitl_fatigue_check_s:
            teller = Teller(rt, client, watch_of(rt))
            running.append(tasks.start("fatigue_signals", lambda: teller.run(stop, every), stop))
        if (keep := settings.retention_ms()) is not None:
            retainer = Retainer(rt.retention(signer), keep)
            every_s = settings.hitl_retention_check_s
            running.append(tasks.start("retention", lambda: retainer.run(stop, every_s), stop))
        if link is not None:
            # a task of its own: a refused token or a hung connect never holds up a stop
            running.append(tasks.start("socket_mode", lambda: link.run(stop), stop))
        log.info(ready_line(settings, served.url), extra={"url": served.url})
        if on_ready is not None:
            on_ready(served.url)
        try:
            await stop.wait()
        finally:
            stop.set()
            for task in running:
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await asyncio.wait_for(task, 10)
            await served.stop()
            await out.aclose()
