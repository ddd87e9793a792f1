"""`hitl-bot mcp serve | proxy`. Imports the MCP SDK only when a command runs, so the
rest of the command line works without the optional `mcp` extra."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.errors import ConfigError, HitlError
from bot.logs import setup as setup_logging
from bot.mcp import messages as msg

if TYPE_CHECKING:
    from bot.mcp.sessions import SessionRuns
    from bot.mcp.transport import HttpServable
    from bot.sdk import Gate

mcp_app = typer.Typer(
    add_completion=False,  # as the whole app: bot/cli/entry.py may run this group alone
    no_args_is_help=True,
    help="The gate for MCP clients: an MCP server, and a gateway in front of MCP servers.",
    rich_markup_mode=None,  # plain click help, as the other subcommands print it
)

PortOpt = Annotated[
    int | None,
    typer.Option(help="Serve streamable HTTP on this port (0: any free port); default: stdio."),
]
HostOpt = Annotated[str, typer.Option(help="Address to listen on with --port.")]
RequesterOpt = Annotated[
    str | None,
    typer.Option(
        help="Who the requests name as requester (default: mcp, mcp-proxy). Over HTTP the "
        "API token's identity is the requester; give this only if it is that identity."
    ),
]

RunIdOpt = Annotated[
    str | None,
    typer.Option(
        "--run-id",
        help="The run every call belongs to, so people can steer and stop it from Slack "
        "(/hitl steer|stop RUN); default: $HITL_RUN_ID, else one made per MCP session "
        "and shown on its cards.",
    ),
]


def _need_sdk() -> None:
    if importlib.util.find_spec("mcp") is None:
        print(msg.NEED_EXTRA, file=sys.stderr)
        raise typer.Exit(2)


def _gate(requester: str | None, default: str) -> Gate:
    """The gate from the environment. Over HTTP the token names the requester, and any
    other name is refused, so the default name is only for direct mode. A call the
    client cancels, or leaves behind by going away, is withdrawn as `abandoned`."""
    from bot.sdk import Gate

    if os.environ.get("HITL_API_URL"):
        named = {"requester": requester} if requester else {}
        return Gate.from_env(gone_reason="abandoned", **named)
    return Gate.from_env(requester=requester or default, gone_reason="abandoned")


def _runs(run_id: str | None, prefix: str) -> SessionRuns:
    from bot.mcp.sessions import SessionRuns, given_run_id

    try:
        return SessionRuns(given_run_id(run_id), prefix=prefix)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


@dataclass
class Servable:
    """A built server: how to run it on stdio, and what serves it over HTTP."""

    run_stdio: Callable[[], Awaitable[None]]
    http: HttpServable


def _serve(
    build: Callable[[], AbstractAsyncContextManager[Servable]],
    port: int | None,
    host: str,
    what: str,
) -> None:
    """Run the built server on stdio or HTTP until stdin closes or a signal arrives."""
    from bot.mcp.transport import TOKEN_ENV, serve_http, until_stopped

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with build() as server:
            if port is None:
                await until_stopped(server.run_stdio(), stop)
            else:

                def ready(url: str) -> None:
                    print(msg.LISTENING.format(what=what, url=url), file=sys.stderr, flush=True)

                token = os.environ.get(TOKEN_ENV) or None
                await serve_http(
                    server.http, stop, host=host, port=port, token=token, on_ready=ready
                )

    setup_logging()
    try:
        asyncio.run(main())
    except HitlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None


@mcp_app.command(short_help="An MCP server: request_approval, ask_human, permission_prompt.")
def serve(
    port: PortOpt = None,
    host: HostOpt = "127.0.0.1",
    requester: RequesterOpt = None,
    ask_timeout: Annotated[
        float, typer.Option(help="Seconds ask_human waits for an answer.")
    ] = 3600.0,
    run_id: RunIdOpt = None,
) -> None:
    """An MCP server with request_approval, ask_human and permission_prompt."""
    import contextlib

    _need_sdk()
    runs = _runs(run_id, "mcp")
    runs.title = msg.RUN_TITLE_SERVE

    from bot.mcp.server import build_server

    @contextlib.asynccontextmanager
    async def build() -> AsyncIterator[Servable]:
        async with _gate(requester, "mcp") as gate:
            server = build_server(gate, ask_timeout_s=ask_timeout, runs=runs)
            yield Servable(server.run_stdio_async, server)

    _serve(build, port, host, "serve")


@mcp_app.command(
    short_help="A gateway: other servers' tools, each call through the gate.",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def proxy(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option(help="YAML file naming the upstream servers.")
    ] = None,
    name: Annotated[
        str, typer.Option(help="The upstream's name (tool prefix) for a command after '--'.")
    ] = "upstream",
    port: PortOpt = None,
    host: HostOpt = "127.0.0.1",
    requester: RequesterOpt = None,
    run_id: RunIdOpt = None,
    print_policy: Annotated[
        bool,
        typer.Option(
            "--print-policy",
            help="Start the upstreams, print each tool's tier (the policy's, or the one its "
            "MCP annotations suggest) as policy YAML, and exit.",
        ),
    ] = False,
) -> None:
    """A gateway: the upstream servers' tools, each call through the approval gate."""
    import contextlib

    _need_sdk()
    runs = _runs(run_id, "mcp-proxy")

    from bot.core.policy import load_policy
    from bot.mcp.config import load_config, single
    from bot.mcp.proxy import Gateway, build_proxy
    from bot.mcp.transport import run_stdio

    try:
        if config is not None and ctx.args:
            raise ConfigError(msg.BOTH_UPSTREAMS)
        if config is None and not ctx.args:
            raise ConfigError(msg.NO_UPSTREAM)
        cfg = load_config(config) if config is not None else single(list(ctx.args), name)
        for spec in cfg.upstreams.values():
            spec.resolved(os.environ)  # an unset ${VAR} stops start-up, naming it
        runs.title = msg.RUN_TITLE_PROXY.format(names=", ".join(cfg.upstreams))[:128]
        # The policy the gate decides by, so a hint is sent only where it names no tier.
        policy = load_policy(os.environ.get("HITL_POLICY") or None)
    except HitlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None

    if print_policy:
        from bot.mcp.inferred import print_inferred

        setup_logging()
        asyncio.run(print_inferred(Gateway(_gate(requester, "mcp-proxy"), cfg, runs, policy)))
        return

    @contextlib.asynccontextmanager
    async def build() -> AsyncIterator[Servable]:
        async with _gate(requester, "mcp-proxy") as gate:
            gateway = Gateway(gate, cfg, runs, policy)
            gateway.warm()
            try:
                server = build_proxy(gateway)
                yield Servable(lambda: run_stdio(server), server)
            finally:
                await gateway.aclose()

    _serve(build, port, host, "proxy")
