"""`hitl-bot claude-code install`: the hook's entry in a project's `.claude/settings.json`.

    {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "/path/hitl-bot claude-code hook --timeout 590",
         "timeout": 600}]}]}}

Every other key of the file is kept as it was. Installing again replaces the hitl-bot
entry it finds instead of adding a second one (two would ask twice per call). A file
that is not valid JSON, or not shaped as Claude Code reads it, is refused with nothing
changed: rewriting it would lose what someone wrote there.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.claudecode import messages as msg
from bot.errors import ConfigError

EVENT = "PreToolUse"
HOOK_ARGS = "claude-code hook"
# The hook gives up on a person this long before Claude Code gives up on the hook, so it
# withdraws the card and answers itself instead of being killed mid-wait.
MARGIN_S = 10


@dataclass(frozen=True)
class Installed:
    path: Path
    entry: dict[str, Any]  # the matcher group written
    replaced: int  # earlier hitl-bot hook entries it took the place of


def hook_wait_s(timeout_s: int) -> int:
    """How long the hook waits for a person under Claude Code's hook `timeout_s`."""
    return max(1, timeout_s - MARGIN_S if timeout_s > 2 * MARGIN_S else timeout_s // 2)


def hitl_bot_command() -> str:
    """This very `hitl-bot`, by absolute path: the hook runs wherever Claude Code's shell
    is, with whatever PATH it has. Run as `python -m bot`, that interpreter."""
    argv0 = sys.argv[0] if sys.argv else ""
    found = shutil.which(argv0) if argv0 and os.sep not in argv0 else argv0
    if found and Path(found).name.startswith("hitl-bot") and Path(found).is_file():
        return shlex.quote(str(Path(found).resolve()))
    # not resolved: a venv's python is a symlink, and only the link finds the venv
    return f"{shlex.quote(str(Path(sys.executable).absolute()))} -m bot"


def hook_entry(timeout_s: int, matcher: str, command: str | None = None) -> dict[str, Any]:
    base = command or hitl_bot_command()
    hook = {
        "type": "command",
        "command": f"{base} {HOOK_ARGS} --timeout {hook_wait_s(timeout_s)}",
        "timeout": timeout_s,
    }
    return {"matcher": matcher, "hooks": [hook]}


def is_ours(hook: Any) -> bool:
    """A hook entry this command wrote (by any path to hitl-bot, any options)."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    cmd = hook.get("command")
    return isinstance(cmd, str) and HOOK_ARGS in cmd and ("hitl-bot" in cmd or "-m bot" in cmd)


def merged(settings: dict[str, Any], entry: dict[str, Any], path: Path) -> tuple[int, list[Any]]:
    """`settings` with `entry` as its only hitl-bot PreToolUse hook, changed in place;
    the number of earlier hitl-bot entries removed, and the new PreToolUse list."""
    hooks = settings.setdefault("hooks", {})
    _expect(isinstance(hooks, dict), path, "hooks", "an object")
    groups = hooks.setdefault(EVENT, [])
    _expect(isinstance(groups, list), path, f"hooks.{EVENT}", "a list")
    kept, replaced = [], 0
    for i, group in enumerate(groups):
        where = f"hooks.{EVENT}[{i}]"
        _expect(isinstance(group, dict), path, where, "an object")
        inner = group.get("hooks", [])
        _expect(isinstance(inner, list), path, f"{where}.hooks", "a list")
        others = [h for h in inner if not is_ours(h)]
        replaced += len(inner) - len(others)
        if others or not inner:
            kept.append({**group, "hooks": others} if len(others) != len(inner) else group)
    hooks[EVENT] = [*kept, entry]
    return replaced, hooks[EVENT]


def install(project: Path, *, timeout_s: int, matcher: str) -> Installed:
    """Write the hook into `project/.claude/settings.json`; ConfigError, nothing changed,
    if the file exists and cannot be merged."""
    path = project / ".claude" / "settings.json"
    settings: Any = {}
    try:
        if path.exists():
            text = path.read_text(encoding="utf-8")
            try:
                settings = json.loads(text) if text.strip() else {}
            except json.JSONDecodeError as exc:
                raise ConfigError(msg.SETTINGS_NOT_JSON.format(path=path, error=exc)) from None
        _expect(isinstance(settings, dict), path, "the top level", "an object")
        entry = hook_entry(timeout_s, matcher)
        replaced, _ = merged(settings, entry, path)
        _write(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(msg.SETTINGS_UNREADABLE.format(path=path, error=exc)) from None
    return Installed(path, entry, replaced)


def _expect(ok: bool, path: Path, where: str, kind: str) -> None:
    if not ok:
        raise ConfigError(msg.SETTINGS_BAD_SHAPE.format(path=path, where=where, kind=kind))


def _write(path: Path, text: str) -> None:
    """Replace the file in one step: a crash mid-write leaves the old file, not half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        # mkstemp makes it 0600; keep the old file's mode, or the usual one for a new file
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
