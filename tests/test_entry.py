"""`hitl-bot`'s entry point: the groups other programs start (Claude Code's hook on every
tool call, an MCP client's server) answer exactly as the whole app does, without loading
the operator's commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.docpages import ROOT

# Run in a child: prints what `hitl-bot ARGS` printed and which of our heavy modules it
# loaded, read at exit (typer ends with sys.exit).
ENTRY = """
import atexit, json, sys
heavy = ("bot.cli.main", "bot.slack", "bot.gate.runtime", "slack_sdk")
atexit.register(lambda: sys.stderr.write("\\nLOADED " + json.dumps(sorted(
    m for m in sys.modules if m.startswith(heavy)))))
sys.argv = ["hitl-bot", *sys.argv[1:]]
from bot.cli.entry import main
main()
"""
WHOLE = "import sys; sys.argv[0] = 'hitl-bot'; from bot.cli.main import app; app()"


def _run(code: str, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("mcp",),
        ("mcp", "proxy", "--help"),
        ("mcp", "nonsense"),
        ("claude-code", "hook", "--help"),
        ("claude-code", "install", "--bogus-flag"),
    ],
)
def test_a_spawned_group_answers_as_the_whole_app_without_loading_it(
    args: tuple[str, ...],
) -> None:
    code, out, err = _run(ENTRY, *args)
    whole_code, whole_out, whole_err = _run(WHOLE, *args)
    shown, _, loaded = err.rpartition("\nLOADED ")
    assert (code, out, shown) == (whole_code, whole_out, whole_err)
    assert json.loads(loaded) == []


def test_the_operators_commands_still_load_for_everything_else() -> None:
    code, out, err = _run(ENTRY, "pending", "--help")
    assert (code, out.splitlines()[0]) == (0, "Usage: hitl-bot pending [OPTIONS]")
    assert "bot.cli.main" in json.loads(err.rpartition("\nLOADED ")[2])
