"""The demo banner's commands work when pasted: after the README's install the
CLI is .venv/bin/hitl-bot, not on PATH."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.demo.app import cli_command


def _script(where: Path) -> Path:
    where.mkdir(parents=True)
    script = where / "hitl-bot"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


def test_the_banner_names_the_venv_path_when_hitl_bot_is_not_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script(tmp_path / ".venv" / "bin")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli_command(str(script), cwd=tmp_path) == ".venv/bin/hitl-bot"
    assert cli_command(".venv/bin/hitl-bot", cwd=tmp_path) == ".venv/bin/hitl-bot"
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    assert cli_command(str(script), cwd=elsewhere) == str(script)


def test_the_banner_says_hitl_bot_when_that_is_what_path_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(script.parent))
    assert cli_command(str(script), cwd=tmp_path) == "hitl-bot"


def test_python_dash_m_bot_is_named_with_its_interpreter(tmp_path: Path) -> None:
    assert cli_command("/somewhere/bot/__main__.py", cwd=tmp_path).endswith(" -m bot")
    assert cli_command("/x/__main__.py", cwd=tmp_path).startswith(sys.executable)
