"""`hitl-bot demo`: the whole system in one process and one event loop.

    store     the embedded Valkey (REDIS_URL unset) under HITL_DATA_DIR
    Slack     the local emulator and its page, on 127.0.0.1:8080 (or a free port)
    bot       run_serve (Slack endpoint, /v1, sweeper, notifier), pointed at the
              emulator with a signing secret and token made up for this session
    agent     a Worker on the scripted model, or on OPENAI_BASE_URL when set

Everything is stopped in the reverse order of its start: the worker hands its
runs over while the store still answers, the bot and the emulator stop, and
the embedded Valkey shuts down last, and only if this process started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape

from bot.agent.llm import ChatClient
from bot.agent.loader import AgentCatalog
from bot.agent.loop import LoopConfig, Stores
from bot.agent.worker import Worker, WorkerConfig
from bot.config import APP_NAME, Settings
from bot.demo import messages as say
from bot.demo.agents import refunds
from bot.demo.claw_script import claw_responder
from bot.demo.keep import API_PORT, api_token, keep_port, kept_port, pick_api_port
from bot.demo.parts import (
    HOST,
    START_TIMEOUT_S,
    Found,
    count_store,
    demo_logging,
    start_bot,
    start_emulator,
    stop_task,
    supervise,
)
from bot.demo.policy import ASK_TIMEOUT_MS, REVIEW_S, policy_for
from bot.demo.refund_script import refund_responder
from bot.errors import PortInUse
from bot.gate.runtime import Runtime, open_runtime
from bot.sandbox.model import ScriptedModel, Turn
from bot.sandbox.slack import SlackEmulator
from bot.signing import load_signer
from bot.supervise import Supervisor

AGENTS = ("claw", "refunds")
LOG_NAME = "demo.log"

# The refunds desk keeps its orders in memory, a stand-in for a payments API; the
# suggested prompt needs an order big enough for a $4,200 refund, refundable once per
# run so that every run can tell the story again.
DEMO_ORDERS: dict[str, dict[str, Any]] = {
    "A1004": {
        "customer": "Dana",
        "total": 4200.00,
        "currency": "USD",
        "item": "TV",
        refunds.PER_RUN: True,
    },
    # The stories' orders (messages.OPENING["refunds"]["stories"]): three small ones for a
    # digest and one to choose a refund for, each refundable once per run.
    **{
        order_id: {
            "customer": customer,
            "total": total,
            "currency": "USD",
            "item": item,
            refunds.PER_RUN: True,
        }
        for order_id, customer, total, item in (
            ("B2001", "Eve", 18.00, "mug"),
            ("B2002", "Finn", 35.00, "lamp"),
            ("B2003", "Gus", 12.00, "book"),
            ("B2004", "Hana", 240.00, "chair"),
        )
    },
}


@dataclass(frozen=True)
class DemoOptions:
    agent: str = "claw"
    port: int = 8080  # the emulator's page; 0 picks a free port
    # The bot's own port (/v1, /metrics): None is the one it had last time on this data
    # dir (3000 on a first start, the README's examples use it), else any free port
    # (said so); 0 is any free port.
    api_port: int | None = None
    policy: Path | None = None  # None: the built-in demo policy, written into the data dir
    data_dir: Path | None = None  # None: HITL_DATA_DIR, or the user data dir
    socket_mode: bool = False  # events over a Socket Mode WebSocket instead of signed HTTP


def demo_responder(messages: Sequence[Mapping[str, Any]]) -> Turn:
    """Either agent's rules, picked by the system prompt: a run resumed from an earlier
    session may belong to the other agent."""
    system = str(messages[0].get("content") or "") if messages else ""
    if system == refunds.SYSTEM_PROMPT:
        return refund_responder(messages)
    return claw_responder(messages)


def demo_settings(
    env: Settings,
    data_dir: Path,
    policy_file: Path,
    *,
    secret: str,
    token: str,
    api_token: str,
    app_token: str | None = None,
    api_port: int = 0,
) -> Settings:
    """`env` with what the demo decides itself: the Slack identity it shares with the
    emulator, HTTP or Socket Mode (`app_token`), local addresses. The Web API URL is
    added once the emulator listens."""
    return env.model_copy(
        update={
            "hitl_data_dir": data_dir,
            "hitl_policy": policy_file,
            "slack_bot_token": SecretStr(token),
            "slack_signing_secret": SecretStr(secret),
            # None: HTTP mode, the emulator delivers signed requests; else over a WebSocket.
            "slack_app_token": SecretStr(app_token) if app_token else None,
            "hitl_host": HOST,
            "hitl_port": api_port,
            "hitl_api_token": env.hitl_api_token or SecretStr(api_token),
        }
    )


async def _model(env: Settings, stack: contextlib.AsyncExitStack) -> tuple[ChatClient, str]:
    if env.openai_base_url:
        # Before anything starts: a missing HITL_MODEL fails fast, naming the fix.
        llm = await stack.enter_async_context(ChatClient.from_settings(env))
        return llm, say.MODEL_REAL.format(model=env.hitl_model, url=env.openai_base_url)
    model = ScriptedModel(demo_responder)
    base_url = await model.start(HOST, 0)
    stack.push_async_callback(model.stop)
    llm = await stack.enter_async_context(ChatClient(base_url, model.model))
    return llm, say.MODEL_SCRIPTED


async def serve_demo(
    options: DemoOptions, out: Console, stop: asyncio.Event, *, env: Settings | None = None
) -> None:
    """Run the demo until `stop` is set (or a part fails: then raise its error)."""
    if options.agent not in AGENTS:
        raise ValueError(f"unknown demo agent {options.agent!r}; pick one of {AGENTS}")
    env = env or Settings.load()
    data_dir = (options.data_dir or env.hitl_data_dir).expanduser().resolve()
    # Made up per session: the emulator signs its deliveries with them, the bot checks.
    secret, token = secrets.token_hex(16), "xoxb-demo-" + secrets.token_hex(12)
    app_token = "xapp-demo-" + secrets.token_hex(12) if options.socket_mode else None
    policy = policy_for(data_dir, options.policy)  # a file that does not load stops us here
    port = options.api_port
    if port is None:  # may wait a moment for a demo that is still stopping
        port = await asyncio.to_thread(pick_api_port, HOST, data_dir)
    base = demo_settings(
        env,
        data_dir,
        policy,
        secret=secret,
        token=token,
        api_token=api_token(data_dir),
        app_token=app_token,
        api_port=port,
    )
    for order_id, order in DEMO_ORDERS.items():
        refunds.ORDERS.setdefault(order_id, order)
    out.print(say.STARTING.format(agent=options.agent), soft_wrap=True)
    with demo_logging(data_dir / LOG_NAME):
        async with contextlib.AsyncExitStack() as stack:
            llm, model_name = await _model(env, stack)
            load_signer(base)  # serve's key, made now so the demo's worker trusts it too
            rt = await stack.enter_async_context(open_runtime(base))
            found = await count_store(rt)
            emu = await start_emulator(secret, token, options.port, out, app_token=app_token)
            emu.workspace.opening = dict(say.OPENING[options.agent])
            stack.push_async_callback(emu.stop)
            settings = base.model_copy(update={"slack_api_url": emu.api_url})
            tasks = Supervisor()  # one for bot and worker: /healthz reports them all
            wanted = kept_port(data_dir) or API_PORT
            try:
                bot_url, bot = await start_bot(settings, stop, options.agent, tasks)
            except PortInUse:
                if options.api_port is not None:
                    raise  # the port asked for: say it is taken
                # Another process took the port between the pick and the bind: any free one.
                settings = settings.model_copy(update={"hitl_port": 0})
                bot_url, bot = await start_bot(settings, stop, options.agent, tasks)
            stack.push_async_callback(stop_task, stop, bot)
            if options.api_port is None:
                _keep_api_port(out, data_dir, wanted, bot_url)
            if options.socket_mode:  # the page works once the bot's socket is up
                await emu.socket.wait_connected(timeout=START_TIMEOUT_S)
            else:
                emu.events_url = bot_url + "/slack/events"
            worker = Worker(
                Stores.of(rt),
                llm=llm,
                agents=AgentCatalog(),
                config=WorkerConfig(shutdown_grace_s=10.0),
                loop_config=LoopConfig(ask_timeout_ms=ASK_TIMEOUT_MS),
                tasks=tasks,
            )
            working = asyncio.create_task(worker.run(stop), name="worker")
            stack.push_async_callback(stop_task, stop, working)
            _print_ready(out, options, rt, found, emu, bot_url, model_name)
            await supervise(stop, bot, working)
            _print_stopped(out, rt, await count_store(rt))


def _keep_api_port(out: Console, data_dir: Path, wanted: int, bot_url: str) -> None:
    """Remember the port the API got, for the next start; say so when it is not the one
    the last start printed (its export lines would name the old one)."""
    got = int(bot_url.rsplit(":", 1)[1])
    keep_port(data_dir, got)
    if got != wanted:
        out.print(say.API_PORT_MOVED.format(port=wanted, got=got), soft_wrap=True)


def cli_command(argv0: str | None = None, cwd: Path | None = None) -> str:
    """How to run this CLI from the user's shell: `hitl-bot` when that name on PATH is
    this program, else the path they started it by (`.venv/bin/hitl-bot` after the
    README's install), else `python -m bot` with this interpreter."""
    here = Path(argv0 if argv0 is not None else sys.argv[0])
    cwd = cwd or Path.cwd()
    if here.name == APP_NAME:
        found = shutil.which(APP_NAME)
        if found and Path(found).resolve() == here.resolve():
            return APP_NAME
        return _from(cwd, here)
    return f"{_from(cwd, Path(sys.executable))} -m bot"


def _from(cwd: Path, path: Path) -> str:
    """`path` as the user would type it from `cwd`: relative when it lies below it."""
    full = (cwd / path) if not path.is_absolute() else path
    try:
        return str(full.relative_to(cwd))
    except ValueError:
        return str(full)


def _pl(n: int, one: str) -> str:
    return say.plural(n, one, one + "s")


def _print_ready(
    out: Console,
    options: DemoOptions,
    rt: Runtime,
    found: Found,
    emu: SlackEmulator,
    bot_url: str,
    model_name: str,
) -> None:
    data_dir = escape(str(rt.settings.hitl_data_dir))
    if rt.server is None:
        store = say.STORE_URL
    elif rt.server.owned:
        store = say.STORE_EMBEDDED.format(data_dir=data_dir)
    else:
        store = say.STORE_SHARED.format(data_dir=data_dir)
    text = say.READY.format(agent=options.agent, model=escape(model_name), page=emu.base_url + "/")
    text += "\n" + (say.TRY_CLAW if options.agent == "claw" else say.TRY_REFUNDS).format(
        review=REVIEW_S
    )
    if options.socket_mode:
        text += "\n" + say.SOCKET_MODE
    out.print(text, soft_wrap=True, highlight=False)
    if found.runs or found.requests:
        line = say.FOUND.format(
            runs=found.runs,
            runs_word=_pl(found.runs, "run"),
            unfinished=found.unfinished,
            requests=found.requests,
            requests_word=_pl(found.requests, "request"),
        )
        line += "\n" + say.FORGOTTEN
        if found.unfinished:
            line += "\n" + say.UNFINISHED.format(cli=escape(cli_command()))
    else:
        line = say.FOUND_NONE
    out.print(f"Store: {store}. {line}", soft_wrap=True, highlight=False)
    # The operator's commands in another terminal find this store only if they are told.
    default_dir = Path(platformdirs.user_data_dir(APP_NAME)).expanduser().resolve()
    elsewhere = rt.server is not None and rt.settings.hitl_data_dir != default_dir
    token = rt.settings.hitl_api_token
    operator = say.OPERATOR.format(
        cli=escape(cli_command()),
        env=say.ENV_HINT.format(data_dir=data_dir) if elsewhere else "",
        bot=bot_url,
        parts=say.BOT_PARTS_SOCKET if options.socket_mode else say.BOT_PARTS_HTTP,
        token=escape(token.get_secret_value() if token else "-"),
        data_dir=data_dir,
        policy=escape(str(rt.settings.hitl_policy)),
        log=escape(str(rt.settings.hitl_data_dir / LOG_NAME)),
    )
    out.print("\n" + operator, soft_wrap=True, highlight=False)


def _print_stopped(out: Console, rt: Runtime, after: Found) -> None:
    where = str(rt.settings.hitl_data_dir) if rt.server else "REDIS_URL"
    text = say.STOPPED.format(
        runs=after.runs,
        runs_word=_pl(after.runs, "run"),
        requests=after.requests,
        requests_word=_pl(after.requests, "request"),
        where=escape(where),
    )
    out.print(text, soft_wrap=True, highlight=False)


async def _main(options: DemoOptions, out: Console) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()

    def on_signal() -> None:
        # The first signal stops gracefully; a second one means "now".
        if stop.is_set():
            out.print(say.FORCED)
            if me is not None:
                me.cancel()
            return
        out.print(say.STOPPING)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        await serve_demo(options, out, stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def run_demo(options: DemoOptions, out: Console) -> int:
    """Run the demo until SIGINT or SIGTERM; the exit status (0 after a graceful stop)."""
    try:
        asyncio.run(_main(options, out))
    except asyncio.CancelledError:
        return 1
    return 0
