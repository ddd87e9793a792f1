"""The layer contract (pyproject.toml, [tool.importlinter]) holds: `pytest` alone catches an
import that points upward, a Redis client outside bot/store, or slack, agent and api
importing each other, as `lint-imports` in .ci/run does."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@pytest.fixture
def logging_kept() -> Iterator[None]:
    """lint_imports configures logging with dictConfig, which disables every logger that
    exists then: the tests after it that read the bot's log lines would see none."""
    loggers = [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    disabled = {lg.name: lg.disabled for lg in loggers}
    yield
    for lg in loggers:
        lg.disabled = disabled[lg.name]


def test_every_import_keeps_the_layer_contract(logging_kept: None) -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0
