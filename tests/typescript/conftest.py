"""The e2e bot (`run_serve` on the Slack emulator), served to the TypeScript client's
tests, and the client packed and installed once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Bot, bot, serve_env, serve_options, slack_mode
from tests.typescript.build import built_or_skip

# the e2e fixtures, served here
__all__ = ["Bot", "bot", "serve_env", "serve_options", "slack_mode"]


@pytest.fixture(scope="session")
def ts_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the packed client installed (and `./tsc`, its compiler)."""
    return built_or_skip(tmp_path_factory.mktemp("ts-client"))


@pytest.fixture(scope="session")
def runtimes_project(ts_project: Path) -> Path:
    """Beside it, the pinned agent frameworks (`ai`, `@openai/agents`) and the client."""
    return built_or_skip(ts_project.parent, runtimes=True)
