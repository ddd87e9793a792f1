"""The real Claude Code CLI and the filesystem MCP server, from the npm registry.

Installed once into a cache folder, keyed by the pinned versions, so a second run
starts at once. `python -m tests.claudecode.node` installs them (CI does, before the
tests, as it installs Chromium). Where the install fails: with CI=true the tests fail
with the install's error; otherwise they skip and say which command failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGES = {
    "@anthropic-ai/claude-code": "2.1.197",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
}
_KEY = "-".join(v for v in PACKAGES.values())


def cache_dir() -> Path:
    base = os.environ.get("HITL_NODE_CACHE") or Path.home() / ".cache" / "hitl-bot-tests" / "node"
    return Path(base) / _KEY


def claude_binary(root: Path) -> Path:
    # The wrapper's postinstall only copies this binary: it runs where scripts are skipped.
    return root / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"


def filesystem_server(root: Path) -> Path:
    return (
        root / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    )


def install() -> Path:
    """The cache folder with both packages, installing them if missing; raises
    RuntimeError naming the command that failed."""
    root = cache_dir()
    if claude_binary(root).exists() and filesystem_server(root).exists():
        return root
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("node and npm are not installed (apt-get install nodejs npm)")
    root.mkdir(parents=True, exist_ok=True)
    argv = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(root)]
    argv += [f"{name}@{version}" for name, version in PACKAGES.items()]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not claude_binary(root).exists():
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return root


def installed_or_skip() -> Path:
    import pytest  # here: CI runs this module with a bare python3 before the venv exists

    try:
        return install()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the npm packages could not be installed and CI=true: {exc}")
        pytest.skip(f"the npm packages could not be installed: {exc}")


if __name__ == "__main__":
    try:
        print(install())
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
