"""`hitl-bot`'s entry point.

The groups other programs start, once per session or once per tool call (an MCP client's
`hitl-bot mcp ...`, Claude Code's `hitl-bot claude-code hook`), load only their own
commands: importing the operator's commands as well cost 0.4 s of CPU per start of the
hook, paid on every tool call, and 0.7 s per start of an MCP server, inside the client's
wait for it.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _prog() -> str:
    # what click would print for the whole app: `python -m bot` run from a checkout
    if Path(sys.argv[0]).name == "__main__.py":
        return "python -m bot"
    return Path(sys.argv[0]).name or "hitl-bot"


def main() -> None:
    group, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if group == "mcp":
        from bot.mcp.cli import mcp_app

        mcp_app(args=args, prog_name=f"{_prog()} mcp")
    elif group == "claude-code":
        from bot.claudecode.cli import claude_code_app

        claude_code_app(args=args, prog_name=f"{_prog()} claude-code")
    else:
        try:
            from bot.cli.main import app

            app()
        except ModuleNotFoundError as exc:
            # `serve`, `worker`, `demo`... in an agent's client-only install: say what to add.
            from bot import messages as msg
            from bot.errors import needs_server_extra

            if not needs_server_extra(exc):
                raise
            print(msg.NEEDS_SERVER.format(module=exc.name), file=sys.stderr)
            raise SystemExit(1) from None
