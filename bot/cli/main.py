"""`hitl-bot`: the operator's command line. Rich tables in a terminal, JSON with --json."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from bot import messages as msg
from bot.claudecode.cli import claude_code_app
from bot.cli import runs as cli_runs
from bot.cli.audit import audit_app
from bot.cli.audit import run_cli as _run
from bot.cli.channels import check_channels_in_slack
from bot.cli.doctor import doctor
from bot.cli.keys import keys_app
from bot.cli.maintenance import maintenance_app
from bot.cli.passkey import passkey_app
from bot.cli.policy_replay import policy_diff, shadow_report
from bot.cli.preflight import check_preflight_in_slack
from bot.cli.report import report
from bot.cli.retention import audit_archive as _audit_archive  # noqa: F401  (registers `audit archive`)
from bot.cli.show import print_table, say_undrawn, show, with_card
from bot.cli.suggest.apply import policy_applied, policy_apply
from bot.cli.suggest.command import policy_suggest
from bot.cli.valkey import valkey_app
from bot.core.durations import format_duration
from bot.core.models import ActionRequest, RiskTier
from bot.core.pagers import pager_lines
from bot.core.policy import TIER_ORDER, Assignees, Policy, load_policy
from bot.errors import HitlError
from bot.gate.runtime import Runtime
from bot.logs import setup as setup_logging
from bot.mcp.cli import mcp_app
from bot.messages import when
from bot.server import eventloop as loops

# Plain click help: typer's rich help prints flags as "--help <bool>" (typer 0.29).
app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__, rich_markup_mode=None)
policy_app = typer.Typer(
    no_args_is_help=True,
    help="Check a policy file, show the one in effect, or try a change on recorded requests.",
    rich_markup_mode=None,
)
policy_app.command("diff", short_help="What a policy change would do to recorded requests.")(
    policy_diff
)
policy_app.command("shadow-report", short_help="Where the shadow policy disagrees.")(shadow_report)
policy_app.command("suggest", short_help="Policy changes the recorded requests support.")(
    policy_suggest
)
policy_app.command("apply", short_help="Merge a reviewed fragment into the policy, audited.")(
    policy_apply
)
policy_app.command("applied", short_help="The policy changes applied, who and when.")(
    policy_applied
)
# Each with a short_help of its own: click cuts one it derives to fit the terminal.
app.add_typer(audit_app, name="audit", short_help="Verify and export the audit trail.")
app.add_typer(keys_app, name="keys", short_help="The key decisions are signed with.")
app.add_typer(policy_app, name="policy", short_help="Check a policy, or show the one in effect.")
app.add_typer(
    valkey_app,
    name="valkey",
    short_help="The embedded Valkey shared by processes without REDIS_URL.",
)
app.add_typer(
    maintenance_app,
    name="maintenance",
    short_help="Operator upkeep that SCANs the whole store.",
)
app.add_typer(passkey_app, name="passkey", short_help="Passkeys enrolled for step-up approvals.")
app.add_typer(mcp_app, name="mcp", short_help="The gate for MCP clients: a server and a gateway.")
app.add_typer(
    claude_code_app,
    name="claude-code",
    short_help="Claude Code's PreToolUse hook, and its install.",
)
out = Console()
err = Console(stderr=True, soft_wrap=True)  # an error names a path: never split it
T = TypeVar("T")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
ARGS_SHOWN = 80  # characters of a request's arguments in `pending` (`show ID`: all)


def _pending_table(reqs: list[ActionRequest]) -> Table:
    t = Table("id", "tool", "args", "risk", "run", "waiting for", "approvals", "level", "expires")
    for r in reqs:
        lvl = r.assignees
        # Slack ids, said as what they are: the CLI has no Slack to ask for names.
        who = [*(f"user {u}" for u in lvl.users), *(f"group {g}" for g in lvl.groups)]
        who += [c if c.startswith("#") else f"channel {c}" for c in lvl.channels]
        args = json.dumps(r.args, ensure_ascii=False, separators=(", ", ": "))
        t.add_row(
            r.id,
            r.tool,
            args if len(args) <= ARGS_SHOWN else args[: ARGS_SHOWN - 1] + "…",
            r.risk.value,
            r.run_id or "-",
            ", ".join(who) or "-",
            f"{len(r.approvals)} of {r.quorum}",
            f"{r.level + 1} of {len(r.levels)}",
            when(r.expires_at),
        )
    return t


@app.command(short_help="What waits for a person, oldest first.")
def pending(as_json: JsonOpt = False, limit: int = 100) -> None:
    """What waits for a person, oldest first: for whom, and until when."""

    async def work(rt: Runtime) -> tuple[list[ActionRequest], dict[str, str]]:
        reqs = await rt.requests.list_pending(limit)
        return reqs, await rt.card_problems([r.id for r in reqs])

    reqs, undrawn = _run(work)
    if as_json:
        print(json.dumps([with_card(r, undrawn) for r in reqs], indent=2))
    elif not reqs:
        out.print("Nothing is waiting for a person.")
    else:
        print_table(_pending_table(reqs))
        say_undrawn(undrawn)


@app.command(short_help="Agent runs, newest first.")
def runs(as_json: JsonOpt = False, limit: int = 50) -> None:
    """Agent runs, newest first: state, turns, what each waits on."""
    found = _run(lambda rt: cli_runs.list_runs(rt, limit))
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in found], indent=2))
    elif not found:
        out.print(msg.CLI_NO_RUNS)
    else:
        print_table(cli_runs.runs_table(found))


app.command(short_help="A request or a run, with its verified history.")(show)


def _level(a: Assignees) -> str:
    oncall = [f"on call: {a.oncall}"] if a.oncall else []
    pager = pager_lines(a, os.environ)  # whether each key is set, never the key
    return ", ".join([*a.users, *a.groups, *a.channels, *oncall, *pager])


def policy_table(policy: Policy) -> Table:
    t = Table(
        "tier", "review", "reviewers", "escalation", "when nobody answers", "approvals",
        "approvers", "standing", "step-up",
    )  # fmt: skip
    for tier in TIER_ORDER:
        tp = policy.tiers[tier]
        chain = " -> ".join(
            f"{_level(a)} ({format_duration(a.timeout or tp.review_timeout)})"
            for a in tp.escalation
        )
        t.add_row(
            tier.value,
            format_duration(tp.review_timeout),
            _level(tp.reviewers),
            chain or "-",
            tp.on_exhausted,
            str(tp.approvals_required),
            # the same principals the machine checks, plus each level's people once reached
            (", ".join(tp.first_deciders()) or "-") + " + each level reached",
            # standing approvals (docs/grants.md): the longest grant, and its widest scope
            f"{format_duration(tp.standing.max)}, {tp.standing.scope}" if tp.standing else "-",
            tp.step_up or "-",  # a passkey confirms each approval (docs/security.md)
        )
    return t


@policy_app.command("check", short_help="Validate a policy file and print its tiers.")
def policy_check(file: Path, as_json: JsonOpt = False) -> None:
    """Validate a policy file and print the tiers it gives."""
    try:
        policy = load_policy(file)
    except HitlError as exc:
        err.print(str(exc), markup=False, highlight=False)
        raise typer.Exit(2) from None
    check_channels_in_slack(policy)  # refuses (exit 2) an unknown or archived channel
    check_preflight_in_slack(policy)  # ...and a missing scope it needs, an unknown user group
    if as_json:
        print(policy.model_dump_json(indent=2))
    else:
        print_table(policy_table(policy))
        out.print(f"Tools not listed are gated at [bold]{policy.default_tier.value}[/bold].")
    for warning in step_up_warnings(policy):
        err.print(warning, markup=False, highlight=False)


def step_up_warnings(policy: Policy) -> list[str]:
    """What `policy check` warns of: a critical tier a click alone approves, and step-up
    tiers that serve would refuse to run here (HITL_PUBLIC_URL unset)."""
    found = [] if policy.tiers[RiskTier.CRITICAL].step_up else [msg.STEP_UP_NO_CRITICAL]
    tiers = ", ".join(t.value for t in policy.step_up_tiers())
    if tiers and not os.environ.get("HITL_PUBLIC_URL"):
        found.append("warning: " + msg.STEP_UP_NEEDS_PUBLIC_URL.format(tiers=tiers))
    return found


@policy_app.command("show", short_help="Print the policy in effect and who decides each tier.")
def policy_show(
    file: Annotated[
        Path | None,
        typer.Argument(help="A policy file (default: HITL_POLICY, else the built-in policy)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the policy in effect: each tier, who may decide it, and the tools."""
    path = file or os.environ.get("HITL_POLICY") or None
    try:
        policy = load_policy(path)
    except HitlError as exc:
        err.print(str(exc), markup=False, highlight=False)
        raise typer.Exit(2) from None
    if as_json:
        print(policy.model_dump_json(indent=2))
        return
    out.print(f"Policy: {path or 'the built-in default (HITL_POLICY is unset)'}", markup=False)
    print_table(policy_table(policy))
    tools = Table("tool", "tier", "review", "rules")
    for name, tp in sorted(policy.tools.items()):
        rules = "; ".join(f"if {r.condition}: {r.tier.value}" for r in tp.rules) or "-"
        tier = (tp.tier or policy.default_tier).value
        tools.add_row(name, tier, tp.review, rules)
    if policy.tools:
        print_table(tools)
    out.print(f"Tools not listed are gated at [bold]{policy.default_tier.value}[/bold].")
    claim, run = (format_duration(ms) for ms in (policy.claim_timeout, policy.execution_timeout))
    out.print(msg.CLI_POLICY_TIMEOUTS.format(claim=claim, run=run), markup=False, soft_wrap=True)
    if policy.operators:
        out.print("Operators: " + ", ".join(policy.operators), markup=False)


@app.command(short_help="Everything on this machine, with a local Slack.")
def demo(
    agent: Annotated[str, typer.Option(help="The agent to run: claw or refunds.")] = "claw",
    port: Annotated[
        int, typer.Option(help="Port of the local Slack page (0: any free port).")
    ] = 8080,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Where the store keeps its data (default: HITL_DATA_DIR)."),
    ] = None,
    socket_mode: Annotated[
        bool,
        typer.Option(
            "--socket-mode", help="Events over Socket Mode (a WebSocket) instead of HTTP."
        ),
    ] = False,
    api_port: Annotated[
        int | None,
        typer.Option(
            help="Port of the bot's /v1 API (default: 3000 if free, else any; 0: any).",
            min=0,
            max=65535,
        ),
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(help="A policy file to run by instead of the demo's own (checked first)."),
    ] = None,
) -> None:
    """Everything at once on this machine: the bot, a local Slack page, an agent, its store."""
    from bot.demo.app import AGENTS, DemoOptions, run_demo

    if agent not in AGENTS:
        raise typer.BadParameter(
            f"{agent!r}: pick one of {', '.join(AGENTS)}", param_hint="--agent"
        )
    try:
        options = DemoOptions(
            agent=agent,
            port=port,
            data_dir=data_dir,
            socket_mode=socket_mode,
            api_port=api_port,
            policy=policy,
        )
        code = run_demo(options, out)
    except HitlError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


def _until_signalled(
    work: Callable[[asyncio.Event], Awaitable[None]], *, uvloop: bool = False
) -> None:
    """Run `work` until SIGTERM or Ctrl-C, then let it finish its shutdown (on uvloop if asked)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await work(stop)

    try:
        loops.run(main(), uvloop=uvloop)
    except HitlError as exc:
        _exit_with(exc)


def _exit_with(exc: HitlError) -> NoReturn:
    err.print(f"error: {exc}", markup=False, highlight=False)
    raise typer.Exit(2) from None


@app.command(short_help="The Slack endpoint, /v1 API, /healthz and /metrics.")
def serve() -> None:
    """The Slack endpoint, the /v1 API, /healthz and /metrics, the sweeper and notifier."""
    from bot.config import Settings
    from bot.server.serve import ready_line, run_serve

    setup_logging()
    try:
        settings = Settings.load()  # before the loop starts: HITL_UVLOOP picks it
    except HitlError as exc:
        _exit_with(exc)

    async def work(stop: asyncio.Event) -> None:
        def ready(url: str) -> None:
            err.print(ready_line(settings, url), markup=False, highlight=False)

        await run_serve(settings, stop, on_ready=ready)

    _until_signalled(work, uvloop=settings.hitl_uvloop)


@app.command(short_help="An agent worker: takes runs from the queue.")
def worker(
    agent: Annotated[
        list[str] | None,
        typer.Option(
            help="Extra agent as module:object (repeatable); claw and refunds are built in"
        ),
    ] = None,
    concurrency: int = 16,
    min_idle: Annotated[
        str | None,
        typer.Option(
            help="Take over a crashed worker's runs after they sat idle this long "
            "(default: HITL_TAKEOVER_AFTER, else 10s)"
        ),
    ] = None,
) -> None:
    """An agent worker: takes runs from the queue; run as many as you like."""
    from bot.agent.worker import main as worker_main

    args = ["--concurrency", str(concurrency)]
    if min_idle:
        args += ["--min-idle", min_idle]
    for spec in agent or []:
        args += ["--agent", spec]
    worker_main(args)


app.command("doctor", short_help="Check a deployment: Slack, the store, the key, the policy.")(
    doctor
)
app.command("report", short_help="Approval fatigue by tier and approver; --html for charts.")(
    report
)


def main() -> None:
    app()
