"""`hitl-bot claude-code install`: the hook lands in `.claude/settings.json` beside what
is already there, once however often it runs, and a file it cannot read is left alone."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.claudecode import settings as cc_settings
from tests.claudecode.conftest import ROOT, decision

INSTALL = (sys.executable, "-m", "bot", "claude-code", "install")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def install(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INSTALL, "--project", str(project), *extra],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings_of(project: Path) -> Any:
    return json.loads((project / ".claude" / "settings.json").read_text())


def ours(settings: Any) -> list[dict[str, Any]]:
    return [
        h
        for group in settings["hooks"]["PreToolUse"]
        for h in group["hooks"]
        if "claude-code hook" in h["command"]
    ]


def test_install_writes_a_hook_claude_code_can_run(tmp_path: Path) -> None:
    done = install(tmp_path)

    assert done.returncode == 0, done.stderr
    written = settings_of(tmp_path)
    command = f"{shlex.quote(sys.executable)} -m bot claude-code hook --timeout 590"
    assert written == {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": command, "timeout": 600}],
                }
            ]
        }
    }
    assert str(tmp_path / ".claude" / "settings.json") in done.stdout
    assert command in done.stdout  # it prints what it wrote
    # Claude Code runs that command from the project, in whatever directory it is
    ran = subprocess.run(
        shlex.split(command),
        input="{}",
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert decision(json.loads(ran.stdout))[0] == "deny"  # no tool named: fails closed


def test_install_keeps_every_other_setting_and_twice_is_one_entry(tmp_path: Path) -> None:
    theirs = {"type": "command", "command": "./scripts/guard.sh"}
    before = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}],
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}],
        },
    }
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(before))

    first = install(tmp_path, "--timeout", "900", "--matcher", "Bash|Write")
    second = install(tmp_path, "--timeout", "900", "--matcher", "Bash|Write")

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    after = settings_of(tmp_path)
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        "model": "opus",
        "permissions": before["permissions"],
    }
    assert after["hooks"]["PostToolUse"] == before["hooks"]["PostToolUse"]
    assert after["hooks"]["PreToolUse"][0] == {"matcher": "Bash", "hooks": [theirs]}
    [hook] = ours(after)
    assert hook["timeout"] == 900 and hook["command"].endswith("claude-code hook --timeout 890")
    assert after["hooks"]["PreToolUse"][1]["matcher"] == "Bash|Write"
    assert "replaced" in second.stdout and "replaced" not in first.stdout


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"hooks": {"PreToolUse": [}', "not valid JSON"),
        ('{"hooks": []}', "hooks is not an object"),
        ('{"hooks": {"PreToolUse": [{"hooks": "x"}]}}', "hooks.PreToolUse[0].hooks is not a list"),
        ("[]", "top level is not an object"),
    ],
)
def test_install_refuses_a_file_it_cannot_merge_and_changes_nothing(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)

    done = install(tmp_path)

    assert done.returncode == 2
    assert str(path) in done.stderr and says in done.stderr and "nothing was changed" in done.stderr
    assert path.read_text() == text
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]  # no temp file left


def test_the_command_is_the_running_hitl_bot_by_absolute_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = Path(sys.executable).parent / "hitl-bot"
    if not script.is_file():
        pytest.skip(f"no console script at {script} (not an installed venv)")
    monkeypatch.setattr(sys, "argv", [str(script), "claude-code", "install"])
    assert cc_settings.hitl_bot_command() == shlex.quote(str(script.resolve()))
    monkeypatch.setattr(sys, "argv", [str(ROOT / "bot" / "__main__.py")])
    assert cc_settings.hitl_bot_command() == f"{shlex.quote(sys.executable)} -m bot"
